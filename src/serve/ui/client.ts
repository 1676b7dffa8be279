// The script every page of the web UI loads: draws the charts a page
// describes in its #charts data with uPlot. Served as /ui/ui.js; plain
// browser JavaScript, no build step.
export const CLIENT_SCRIPT = `
(function () {
  var data = document.getElementById('charts');
  if (!data) return;
  var charts = JSON.parse(data.textContent);
  // Axes, grid and marks in the page's colours, so that dark mode reads as well as light.
  var css = getComputedStyle(document.documentElement);
  var colour = function (name) { return css.getPropertyValue(name).trim(); };
  var axis = function (extra) {
    var a = { stroke: colour('--fg'), grid: { stroke: colour('--line'), width: 1 }, ticks: { stroke: colour('--line'), width: 1 } };
    for (var k in extra) a[k] = extra[k];
    return a;
  };
  // Whole numbers only on the axis of a count: no tick at 0.5 breaks.
  var COUNT_INCRS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000, 200000, 500000, 1e6, 2e6, 5e6, 1e7, 2e7, 5e7, 1e8, 2e8, 5e8, 1e9];
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
    var expected = chart.expected || [];
    function line(u, x) {
      // On a pixel boundary: the line covers whole pixels, crisp.
      var px = Math.round(u.valToPos(x, 'x', true));
      u.ctx.beginPath();
      u.ctx.moveTo(px, u.bbox.top);
      u.ctx.lineTo(px, u.bbox.top + u.bbox.height);
      u.ctx.stroke();
    }
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
      axes: [
        axis(chart.xTime ? {} : { incrs: COUNT_INCRS }),
        axis(chart.format === 'percent' ? { values: function (u, ticks) { return ticks.map(fmt); }, size: 72 } : { incrs: COUNT_INCRS, values: function (u, ticks) { return ticks.map(fmt); }, size: 72 }),
      ],
      series: series,
      hooks: {
        draw: [function (u) {
          var ctx = u.ctx;
          ctx.save();
          ctx.lineWidth = 2 * devicePixelRatio;
          ctx.strokeStyle = colour('--bad');
          marks.forEach(function (x) { line(u, x); });
          // Expected misses: dashed, in the muted colour, apart from the breaks.
          ctx.strokeStyle = colour('--muted');
          ctx.setLineDash([4 * devicePixelRatio, 4 * devicePixelRatio]);
          expected.forEach(function (x) { line(u, x); });
          ctx.restore();
        }],
      },
    };
    var plot = new uPlot(options, [chart.x].concat(shown), el);
    // The chart on its element, for whoever inspects the page.
    el.uplot = plot;
    window.addEventListener('resize', function () { plot.setSize({ width: el.clientWidth, height: 220 }); });
  }
  charts.forEach(draw);
})();
`;
