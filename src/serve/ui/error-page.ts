// What a browser gets when a page of the web UI cannot be shown: a page in
// the UI's style naming the problem and what to do, not the API's JSON.
import { html, Html } from './html.js';
import { SECTIONS } from './layout.js';
import { STYLE } from './style.js';

/** The web UI's pages (its assets under /ui/ answer as files). */
export const isUiPage = (path: string) => SECTIONS.some(([, page]) => path === page || (page !== '/' && path.startsWith(`${page}/`)));

export function errorPage(status: number, code: string, message: string, hint: string, requestId: string): string {
  const title = status === 404 ? 'Not found' : status === 400 ? 'Bad request' : code.replace(/_/g, ' ');
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,"><title>${status} ${title} · cachebreak</title><style>${new Html(STYLE)}</style></head>
<body>
<header><h1>cachebreak</h1><nav>${SECTIONS.map(([, path, label]) => html`<a href="${path}">${label}</a>`)}</nav></header>
<main class="error-page"><h2 id="error-status">${status} · ${title}</h2><p id="error-message">${message}</p><p id="error-hint" class="muted">${hint}</p><p class="muted">Request id <code>${requestId}</code></p></main>
</body></html>
`.text;
}
