// The web UI's stylesheet, served inline: one response per page, no build step.
export const STYLE = `
:root { color-scheme: light dark; --bg: #ffffff; --fg: #1d2129; --muted: #5c6370; --line: #d8dce3; --card: #f5f7fa; --bad: #c4314b; --good: #1a7f37; --warn: #9a6700; --add: #dafbe1; --del: #ffebe9; --mov: #fff8c5; --chg: #ddf4ff; }
@media (prefers-color-scheme: dark) { :root { --bg: #0f1217; --fg: #e6e8eb; --muted: #9aa3ad; --line: #333a44; --card: #1b1f26; --add: #12361f; --del: #42191c; --mov: #3b3210; --chg: #0f2d46; } }
* { box-sizing: border-box; }
html { background: var(--bg); }
body { margin: 0 auto; max-width: 1200px; padding: 16px 24px 32px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); }
a { color: inherit; }
h1 { font-size: 20px; margin: 0 16px 0 0; }
h2 { font-size: 16px; margin: 28px 0 8px; }
header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 8px 16px; border-bottom: 1px solid var(--line); padding-bottom: 10px; }
nav a { margin-right: 12px; }
nav a[aria-current] { font-weight: 600; text-decoration: none; }
.range { display: flex; flex-wrap: wrap; gap: 6px 10px; align-items: center; margin: 10px 0; font-size: 13px; }
.range a { padding: 2px 8px; border: 1px solid var(--line); border-radius: 12px; text-decoration: none; }
.range a[aria-current] { background: var(--fg); color: var(--card); }
.range form { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; }
.range input { width: 13.5em; font: inherit; }
.muted, footer { color: var(--muted); }
.numbers { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 12px; margin-top: 12px; }
.number { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; }
.number .value { display: block; font-size: 22px; font-weight: 600; }
.number .value small { display: block; font-size: 13px; font-weight: 400; color: var(--muted); }
.number .label { color: var(--muted); font-size: 12px; }
.chart { width: 100%; min-height: 60px; }
.scroll { overflow-x: auto; }
table { width: 100%; border-collapse: collapse; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; overflow-wrap: break-word; }
th { font-weight: 600; color: var(--muted); font-size: 12px; }
th a { text-decoration: none; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
code { font-family: ui-monospace, "SF Mono", Menlo, monospace; font-size: 12px; overflow-wrap: anywhere; }
.reason { font-weight: 600; color: var(--bad); overflow-wrap: anywhere; }
.columns { display: grid; grid-template-columns: repeat(auto-fit, minmax(280px, 1fr)); gap: 16px; }
.side h3 { font-size: 13px; margin: 0 0 6px; color: var(--muted); }
ol.prefix { margin: 0; padding-left: 28px; }
ol.prefix li { padding: 1px 6px; border-radius: 4px; }
ol.prefix li.fold { list-style: none; margin-left: -22px; }
ol.prefix li.fold summary { color: var(--muted); cursor: pointer; }
ol.prefix li.fold ol.prefix { padding-left: 22px; }
.added { background: var(--add); } .removed { background: var(--del); } .moved { background: var(--mov); } .changed { background: var(--chg); }
.tag { font-size: 11px; color: var(--muted); margin-left: 6px; }
.legend span { padding: 1px 6px; border-radius: 4px; margin-right: 6px; font-size: 12px; }
.gap { height: 12px; background: var(--card); border: 1px solid var(--line); border-radius: 6px; position: relative; margin: 6px 0; max-width: 600px; }
.gap .bar { position: absolute; inset: 0 auto 0 0; background: var(--warn); border-radius: 6px; }
.gap .ttl { position: absolute; top: -4px; bottom: -4px; width: 2px; background: var(--bad); }
.sort { margin: 8px 0; } .sort a[aria-current] { font-weight: 600; text-decoration: none; color: var(--fg); }
.search { display: flex; flex-wrap: wrap; gap: 8px; margin: 8px 0; }
.search input[type=search] { flex: 1 1 200px; font: inherit; }
/* Names (models, agents, tools, reasons) wrap between one another, never inside one; ids only where they have spaces or hyphens. */
.nm { white-space: nowrap; overflow-wrap: normal; }
.wrap { overflow-wrap: normal; }
code.id { overflow-wrap: normal; }
table.cards th.n { white-space: normal; }
/* A wide table as cards on a narrow screen: each row a block, each cell labelled. */
@media (max-width: 1100px) {
  table.cards thead { display: none; }
  table.cards tr { display: block; border-bottom: 1px solid var(--line); padding: 6px 0; }
  table.cards td { display: inline-block; border: 0; padding: 2px 12px 2px 0; max-width: 100%; }
  table.cards td.n { text-align: left; }
  table.cards td[data-label]::before { content: attr(data-label) " "; color: var(--muted); font-size: 12px; }
  table.cards td[data-label]:empty { display: none; }
}
.filters { display: flex; flex-wrap: wrap; gap: 8px 14px; align-items: center; margin: 8px 0 12px; font-size: 13px; }
.filters label { display: flex; gap: 4px; align-items: center; color: var(--muted); }
.filters input { width: 10em; font: inherit; }
.filters select { font: inherit; max-width: 14em; }
.pager { display: flex; gap: 16px; align-items: baseline; margin: 10px 0; }
.error-page { max-width: 720px; }
footer { margin-top: 32px; font-size: 12px; }
`;
