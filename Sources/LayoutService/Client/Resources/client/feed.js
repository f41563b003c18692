// The FeedLayout reference client's view (/view/{id}): a thin page on the ES module that any page can import
// (/client/feedlayout.mjs, kept in clients/js/ of the repository). The module does everything; this page reads the
// layout's id from its address and says what the module is doing in its status line.
import { openLayout } from '/client/feedlayout.mjs';

const id = decodeURIComponent(location.pathname.split('/').filter(Boolean).pop() ?? '');
const statusLine = document.getElementById('status');

function fail(error) {
  statusLine.dataset.failed = 'true';
  statusLine.textContent = String(error?.message ?? error);
}

function showStatus(view) {
  const layout = view.layout;
  const breakpoint = view.breakpoint;
  if (!layout || !breakpoint || statusLine.dataset.failed) return;
  const { loaded, made } = view.pages;
  const pages = view.complete ? `all ${loaded} pages` : `${loaded} of ${made} pages so far`;
  statusLine.textContent = `${layout.items} pins · ${breakpoint.width} px, ${breakpoint.columns} columns · ${pages}`
    + (layout.status === 'running' ? ' · still laying out' : '');
}

try {
  if (!/^[0-9a-f]{32}$/.test(id)) throw new Error(`${location.pathname} names no layout`);
  const view = openLayout({ baseURL: location.origin, layoutId: id, container: document.getElementById('feed') });
  for (const type of ['layout', 'page', 'breakpoint', 'complete']) view.addEventListener(type, () => showStatus(view));
  view.addEventListener('error', event => {
    console.error(event.detail);
    fail(event.detail);
  });
  // What a test (or a page embedding the view) can ask: settled(), breakpoint, complete, layoutStatus.
  window.feedlayout = view;
} catch (error) {
  console.error(error);
  fail(error);
}
