// The script every page of the web UI loads: draws the charts a page
// describes in its #charts data with uPlot. Served as /ui/ui.js; plain
// browser JavaScript, no build step.
export const CLIENT_SCRIPT = `
(function () {
  var data = document.getElementById('charts');
  if (!data) return;
  var charts = JSON.parse(data.textContent);
  var formats = {
    percent: function (v) { return v == null ? '–' : (v * 100).toFixed(1) + ' %'; },
    count: function (v) { return v == null ? '–' : Math.round(v).toLocaleString('en-US'); },
  };
  function draw(chart) {
    var el = document.getElementById(chart.id);
    var fmt = formats[chart.format] || formats.count;
    // Stacked bars: each series drawn as the sum of itself and those after it, the total first.
    var shown = chart.series.map(function (s, i) {
      if (!chart.stacked) return s.values;
      return s.values.map(function (_, j) {
        var sum = 0;
        for (var k = i; k < chart.series.length; k++) sum += chart.series[k].values[j] || 0;
        return sum;
      });
    });
    var bars = chart.kind === 'bars' ? uPlot.paths.bars({ size: [0.8, 48] }) : undefined;
    var series = [{ label: chart.xLabel || 'time', value: chart.xTime ? undefined : function (u, v) { return v == null ? '' : String(v); } }].concat(chart.series.map(function (s, i) {
      return {
        label: s.label,
        stroke: s.color,
        fill: chart.kind === 'bars' ? s.color : undefined,
        width: chart.kind === 'bars' ? 0 : 2,
        paths: bars,
        points: { show: chart.kind !== 'bars' },
        spanGaps: false,
        value: function (u, v, si, idx) { return idx == null ? '–' : fmt(s.values[idx]); },
      };
    }));
    var marks = chart.marks || [];
    var options = {
      width: el.clientWidth,
      height: 220,
      // Times in UTC, as the tables show them.
      tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'); },
      // Half a step of room at each end, so that the first and last bars show whole.
      scales: {
        x: { time: !!chart.xTime, range: function (u, min, max) { return [min - chart.step / 2, max + chart.step / 2]; } },
        y: chart.format === 'percent' ? { range: [0, 1] } : {},
      },
      axes: [chart.xTime ? {} : { incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000] }, { values: function (u, ticks) { return ticks.map(fmt); }, size: 72 }],
      series: series,
      hooks: {
        draw: [function (u) {
          var ctx = u.ctx;
          ctx.save();
          ctx.strokeStyle = '#c4314b';
          ctx.lineWidth = 2 * devicePixelRatio;
          marks.forEach(function (x) {
            var px = u.valToPos(x, 'x', true);
            ctx.beginPath();
            ctx.moveTo(px, u.bbox.top);
            ctx.lineTo(px, u.bbox.top + u.bbox.height);
            ctx.stroke();
          });
          ctx.restore();
        }],
      },
    };
    var plot = new uPlot(options, [chart.x].concat(shown), el);
    window.addEventListener('resize', function () { plot.setSize({ width: el.clientWidth, height: 220 }); });
  }
  charts.forEach(draw);
})();
`;
