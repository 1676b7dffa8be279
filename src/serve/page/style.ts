// The page's stylesheet: inline, so the page is one response with no build step.
export const STYLE = `
:root { color-scheme: light dark; --fg: #1d2129; --muted: #5c6370; --line: #d8dce3; --card: #f5f7fa; --bad: #c4314b; --good: #1a7f37; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e8eb; --muted: #9aa3ad; --line: #333a44; --card: #1b1f26; } }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1200px; padding: 24px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); }
h1 { font-size: 22px; margin: 0; }
h2 { font-size: 16px; margin: 28px 0 8px; }
header p, footer, .muted { color: var(--muted); }
.numbers { display: grid; grid-template-columns: repeat(5, 1fr); gap: 12px; margin-top: 16px; }
.number { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; }
.number .value { display: block; font-size: 26px; font-weight: 600; }
.number .label { color: var(--muted); font-size: 12px; }
.number .value small { display: block; font-size: 13px; font-weight: 400; color: var(--muted); }
table { width: 100%; border-collapse: collapse; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; white-space: nowrap; }
td.wrap { white-space: normal; overflow-wrap: anywhere; }
th { font-weight: 600; color: var(--muted); font-size: 12px; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
code { font-family: ui-monospace, "SF Mono", Menlo, monospace; font-size: 12px; }
.reason { font-weight: 600; color: var(--bad); }
.columns { display: grid; grid-template-columns: 2fr 1fr; gap: 24px; }
footer { margin-top: 32px; font-size: 12px; }
`;
