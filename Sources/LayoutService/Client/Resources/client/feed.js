// The FeedLayout reference client's view: a thin page on the ES module that any page can import
// (/client/feedlayout.mjs, kept in clients/js/ of the repository). The module does everything; this page reads what
// to show from its address and says what the module is doing in its status line.
//   /view/{id}       a layout;
//   /view/feed/{id}  a subscribed feed's latest version, following it: a new version shows a bar "N new pins", and
//                    nothing on the screen moves until the reader clicks it (then the pin at the top stays put).
import { openLayout } from '/client/feedlayout.mjs';

const path = location.pathname.split('/').filter(Boolean);
const following = path.length === 3 && path[1] === 'feed';
const id = decodeURIComponent(path.at(-1) ?? '');
const statusLine = document.getElementById('status');
const newPins = document.getElementById('new-pins');

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

// The versions that came since the one shown: the newest is shown on a click, the pins they added are counted.
function followVersions(view) {
  let newest = null;
  let added = 0;
  const seen = new Set();
  view.addEventListener('version', ({ detail: version }) => {
    if (typeof version?.layout !== 'string' || version.layout === view.layoutId || seen.has(version.layout)) return;
    seen.add(version.layout);
    newest = version.layout;
    added += version.changes?.added ?? 0;
    newPins.textContent = added === 0 ? 'Pins changed: show them' : added === 1 ? '1 new pin' : `${added} new pins`;
    newPins.hidden = false;
  });
  newPins.addEventListener('click', async () => {
    const shown = newest;
    newPins.disabled = true;
    try {
      await view.showLayout(shown);
      if (newest === shown) {
        newPins.hidden = true;
        added = 0;
      }
    } catch (error) {
      console.error(error);
      fail(error);
    } finally {
      newPins.disabled = false;
    }
  });
}

try {
  if (!/^[0-9a-f]{32}$/.test(id)) throw new Error(`${location.pathname} names no ${following ? 'feed' : 'layout'}`);
  const container = document.getElementById('feed');
  const view = openLayout(following
    ? { baseURL: location.origin, feedId: id, follow: true, container }
    : { baseURL: location.origin, layoutId: id, container });
  for (const type of ['layout', 'page', 'breakpoint', 'complete']) view.addEventListener(type, () => showStatus(view));
  view.addEventListener('error', event => {
    console.error(event.detail);
    fail(event.detail);
  });
  if (following) followVersions(view);
  // What a test (or a page embedding the view) can ask: settled(), breakpoint, complete, layoutStatus.
  window.feedlayout = view;
} catch (error) {
  console.error(error);
  fail(error);
}
