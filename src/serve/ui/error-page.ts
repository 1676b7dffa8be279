// What a browser gets when a page of the web UI cannot be shown: a page in
// the UI's style naming the problem and what to do, not the API's JSON.
import { html, Html } from './html.js';
import { STYLE } from './style.js';

/** The web UI's pages (its assets under /ui/ answer as files). */
export const isUiPage = (path: string) => path === '/' || /^\/(sessions|breaks|insights|alerts)(\/|$)/.test(path);

export function errorPage(status: number, code: string, message: string, hint: string, requestId: string): string {
  const title = status === 404 ? 'Not found' : status === 400 ? 'Bad request' : code.replace(/_/g, ' ');
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,"><title>${status} ${title} · cachebreak</title><style>${new Html(STYLE)}</style></head>
<body>
<header><h1>cachebreak</h1><nav><a href="/">Overview</a><a href="/sessions">Sessions</a><a href="/breaks">Breaks</a><a href="/insights">Insights</a><a href="/alerts">Alerts</a></nav></header>
<main class="error-page"><h2 id="error-status">${status} · ${title}</h2><p id="error-message">${message}</p><p id="error-hint" class="muted">${hint}</p><p class="muted">Request id <code>${requestId}</code></p></main>
</body></html>
`.text;
}
