// The FeedLayout reference client: shows a layout that `feedlayout serve` precomputed, without measuring
// anything, so no card ever moves. Plain JavaScript, no framework, no build step: read it top to bottom and copy
// what you need.
//
//   1. Ask the service for the layout (GET /v1/layouts/{id}): its breakpoints and whether it is done.
//   2. Load the layout's style sheet (its fonts and text styles) and its first page; place each card at its frame.
//   3. As the reader scrolls, keep only the cards near the viewport in the DOM, and fetch the next page by cursor
//      (GET /v1/pages?cursor=) before the reader reaches the end of the pages so far.
//   4. On resize, switch to the breakpoint that fits the window, keeping the pin at the top of the viewport in view.
'use strict';

const id = decodeURIComponent(location.pathname.split('/').filter(Boolean).pop() ?? '');
const layoutURL = `/v1/layouts/${encodeURIComponent(id)}`;
const origin = document.querySelector('[data-layout-origin]');
const statusLine = document.getElementById('status');

// How far beyond the viewport cards stay in the DOM, and how far ahead pages are fetched, in viewport heights.
const KEEP = 1;
const FETCH_AHEAD = 2;
// Pins are looked up by their vertical extent, in bands of this many CSS pixels.
const BAND = 1024;

let layout = null;       // The service's answer to GET /v1/layouts/{id}.
let parts = [];          // One per breakpoint (see makePart).
let part = null;         // The breakpoint shown.
const shown = new Map(); // Pin index → its card in the DOM.
const fonts = { title: '', caption: '' }; // CSS font shorthands, to ask document.fonts which faces a text needs.
const fontsAsked = new Set(); // Pins whose fonts were asked for once (a font that fails to load never blocks them).
let renderPending = false;
let pending = 0;         // Requests and font loads in flight.
let idleWaiters = [];
let firstCards = true;
let firstCardPhotos = []; // [img, URL] of the first cards, asked for one frame after them (see render).
let ready = false;       // Set once the layout, its style sheet and its first page are in.

function makePart(summary) {
  return {
    index: summary.index, width: summary.width, columns: summary.columns, pageCount: summary.pages,
    pagesLoaded: 0, cursor: null, contentHeight: 0, pins: [], bands: [], loading: null, complete: false,
  };
}

// ---- Talking to the service ----------------------------------------------------------------------------------

async function fetchJSON(url) {
  const response = await fetch(url);
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    const error = new Error(body?.detail ?? `${url}: HTTP ${response.status}`);
    error.problem = body;
    throw error;
  }
  return body;
}

// Counts the work in flight, so that settled() knows when the page is still.
async function track(work) {
  pending += 1;
  try {
    return await work();
  } finally {
    pending -= 1;
    scheduleRender();
  }
}

async function refreshLayout() {
  layout = await fetchJSON(layoutURL);
  for (const summary of layout.layouts) parts[summary.index].pageCount = summary.pages;
}

function isComplete(p) {
  return layout.status !== 'running' && p.pagesLoaded >= p.pageCount;
}

// Fetches a breakpoint's next page: the first by its index, every other by the cursor of the one before.
// Each page is asked for once; a caller that comes while it is on its way gets the same promise.
function loadNextPage(p) {
  if (p.loading || p.complete) return p.loading;
  p.loading = track(async () => {
    if (p.pagesLoaded >= p.pageCount && layout.status === 'running') await refreshLayout();
    if (isComplete(p)) {
      p.complete = true;
      return;
    }
    const url = p.pagesLoaded === 0
      ? `${layoutURL}/pages/0?layout=${p.index}`
      : `/v1/pages?cursor=${encodeURIComponent(p.cursor)}&layout=${encodeURIComponent(id)}`;
    addPage(p, await fetchJSON(url));
    p.complete = isComplete(p);
  }).catch(error => {
    // A page the service is still making (it waited ?wait= seconds for it): ask again on the next render.
    if (error.problem?.layoutStatus === 'running') return;
    fail(error);
    p.complete = true;
  }).finally(() => {
    p.loading = null;
  });
  return p.loading;
}

function addPage(p, page) {
  p.pagesLoaded += 1;
  p.cursor = page.cursor;
  p.contentHeight = page.contentHeight;
  for (const item of page.items) {
    p.pins[item.index] = item;
    const { y, height } = item.frame;
    for (let band = Math.floor(y / BAND); band <= Math.floor((y + height) / BAND); band++) {
      (p.bands[band] ??= []).push(item.index);
    }
  }
  if (p === part) showSize();
}

// The layout's fonts and text styles, as the service measured with them.
function loadStyle() {
  return track(() => new Promise((resolve, reject) => {
    const link = document.createElement('link');
    link.rel = 'stylesheet';
    link.href = `${layoutURL}/style.css`;
    link.onload = resolve;
    link.onerror = () => reject(new Error(`${link.href} did not load`));
    document.head.append(link);
  }).then(() => {
    for (const role of ['title', 'caption']) {
      const probe = document.createElement('div');
      probe.className = `feedlayout-${role}`;
      probe.hidden = true;
      document.body.append(probe);
      const style = getComputedStyle(probe);
      fonts[role] = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
      probe.remove();
      // Every text needs the primary font: it loads now, while the first page is on its way.
      track(() => document.fonts.load(fonts[role]).catch(error => console.warn('a font did not load', error)));
    }
  }));
}

// ---- Cards ----------------------------------------------------------------------------------------------------

// Places an element at a rectangle given relative to its parent's top-left corner.
function place(element, rect, parent = { x: 0, y: 0 }) {
  element.style.left = `${rect.x - parent.x}px`;
  element.style.top = `${rect.y - parent.y}px`;
  element.style.width = `${rect.width}px`;
  element.style.height = `${rect.height}px`;
}

// A photo's address: an http(s) URL as it is, a relative one from the service's image root (/files/).
function photoURL(url) {
  if (/^https?:\/\//i.test(url)) return url;
  if (/^[a-z][a-z0-9+.-]*:|^\//i.test(url)) return null;
  return `/files/${url}`;
}

function makeCard(item) {
  const frame = item.frame;
  const link = /^https?:\/\//i.test(item.link ?? '') ? item.link : null;
  const card = document.createElement(link ? 'a' : 'article');
  if (link) card.href = link;
  else card.tabIndex = 0;
  card.className = 'card';
  card.dataset.index = item.index;
  const title = item.annotation?.title?.text;
  card.setAttribute('aria-label', title || item.annotation?.text?.text || `Pin ${item.index + 1}`);
  place(card, frame);

  // The slot shows the placeholder colour until the photo arrives, and stays when it never does.
  const photo = item.photo;
  const slot = document.createElement('div');
  slot.className = 'slot';
  place(slot, photo.slot, frame);
  if (photo.placeholder) slot.style.background = photo.placeholder.color;
  card.append(slot);
  // Only photos the service read (their size came from the file's header) are loaded.
  const source = photo.url && photo.sizeFrom === 'header' ? photoURL(photo.url) : null;
  if (source) {
    const image = document.createElement('img');
    image.className = 'photo';
    image.alt = '';
    image.loading = 'lazy';
    image.decoding = 'async';
    image.width = Math.round(photo.frame.width);
    image.height = Math.round(photo.frame.height);
    place(image, photo.frame, frame);
    if (firstCards) firstCardPhotos.push([image, source]);
    else image.src = source;
    card.append(image);
  }
  for (const [role, block] of [['title', item.annotation?.title], ['caption', item.annotation?.text]]) {
    if (!block) continue;
    const text = document.createElement('div');
    text.className = `feedlayout-${role}`;
    place(text, block.frame, frame);
    text.textContent = block.text;
    // The first cards' text is timed by the browser (Element Timing): when the reader first sees the feed.
    if (firstCards) text.setAttribute('elementtiming', 'first-cards');
    card.append(text);
  }
  return card;
}

// The characters of the pins' titles and of their captions, each once. Which fonts a text needs depends only on
// its characters, and the browser looks up every character it is given: with the visible cards' whole text the
// first render made 7,610 font lookups (66 ms in a Chromium trace), with its distinct characters 290 (27 ms).
function characters(indices) {
  const title = new Set(), caption = new Set();
  for (const index of indices) {
    const annotation = part.pins[index].annotation;
    for (const character of annotation?.title?.text ?? '') title.add(character);
    for (const character of annotation?.text?.text ?? '') caption.add(character);
  }
  return { title: [...title].join(''), caption: [...caption].join('') };
}

// Text is shown only once its fonts are loaded, so that no line ever moves when a font arrives. Fallback fonts
// carry a unicode-range, so a text loads only the fonts that have its characters.
function fontsReady(indices) {
  const needed = indices.filter(index => !fontsAsked.has(index));
  if (needed.length === 0) return true;
  const text = characters(needed);
  if (document.fonts.check(fonts.title, text.title) && document.fonts.check(fonts.caption, text.caption)) return true;
  for (const index of needed) fontsAsked.add(index);
  track(() => Promise.all([document.fonts.load(fonts.title, text.title), document.fonts.load(fonts.caption, text.caption)])
    .catch(error => console.warn('a font did not load', error)));
  return false;
}

// ---- Windowing ------------------------------------------------------------------------------------------------

function originTop() {
  return origin.getBoundingClientRect().top + scrollY;
}

// The pins of a breakpoint whose frames meet [from, to), in index order (reading order).
function pinsBetween(p, from, to) {
  const found = new Set();
  for (let band = Math.max(0, Math.floor(from / BAND)); band <= Math.floor(to / BAND); band++) {
    for (const index of p.bands[band] ?? []) {
      const { y, height } = p.pins[index].frame;
      if (y < to && y + height > from) found.add(index);
    }
  }
  return [...found].sort((a, b) => a - b);
}

function scheduleRender() {
  if (renderPending) return;
  renderPending = true;
  requestAnimationFrame(render);
}

function render() {
  renderPending = false;
  if (!ready) return;
  // The first cards' photos are asked for in the frame after the cards: their downloads and decoding would
  // otherwise share the CPU with painting the first cards (painted about 40 ms later, in alternating runs on two
  // busy cores). A card
  // scrolled away meanwhile is gone; it is made anew, with its photo, when it comes back.
  if (!firstCards && firstCardPhotos) {
    for (const [image, source] of firstCardPhotos) if (image.isConnected) image.src = source;
    firstCardPhotos = null;
  }
  const top = scrollY - originTop();
  // The first cards are the visible ones alone, so that they paint as soon as they can; the rest follow.
  const keep = firstCards ? 0 : KEEP;
  const wanted = pinsBetween(part, top - innerHeight * keep, top + innerHeight * (1 + keep));
  const wantedSet = new Set(wanted);
  for (const [index, card] of shown) {
    // A card with keyboard focus stays, so that Tab goes on from it.
    if (wantedSet.has(index) || card.contains(document.activeElement)) continue;
    card.remove();
    shown.delete(index);
  }
  const missing = wanted.filter(index => !shown.has(index));
  if (missing.length > 0 && fontsReady(missing)) {
    // Cards go into the DOM in index order, so that keyboard focus moves through them in reading order.
    let next = origin.firstElementChild;
    for (const index of wanted) {
      const existing = shown.get(index);
      if (existing) {
        next = existing.nextElementSibling;
        continue;
      }
      const card = makeCard(part.pins[index]);
      origin.insertBefore(card, next);
      shown.set(index, card);
    }
    if (firstCards) {
      firstCards = false;
      performance.mark('feedlayout:first-cards');
      scheduleRender();
    }
  }
  if (!part.complete && top + innerHeight * (1 + FETCH_AHEAD) > part.contentHeight) loadNextPage(part);
  showStatus();
  settleIfIdle();
}

function showSize() {
  origin.style.width = `${part.width}px`;
  origin.style.height = `${part.contentHeight}px`;
}

function showStatus() {
  if (!layout || statusLine.dataset.failed) return;
  const pages = part.complete ? `all ${part.pagesLoaded} pages` : `${part.pagesLoaded} of ${part.pageCount} pages so far`;
  statusLine.textContent = `${layout.items} pins · ${part.width} px, ${part.columns} columns · ${pages}`
    + (layout.status === 'running' ? ' · still laying out' : '');
}

function fail(error) {
  console.error(error);
  statusLine.dataset.failed = 'true';
  statusLine.textContent = String(error.message ?? error);
}

// ---- Breakpoints ----------------------------------------------------------------------------------------------

// The widest breakpoint that fits the window (as a media query measures it), else the narrowest.
function chooseBreakpoint() {
  const byWidth = [...parts].sort((a, b) => a.width - b.width);
  let chosen = byWidth[0];
  for (const p of byWidth) if (p.width <= innerWidth) chosen = p;
  return chosen;
}

// The pin at the top of the viewport: the first in reading order that is at least partly visible, and how far
// below the viewport's top its frame begins.
function topPin() {
  const top = scrollY - originTop();
  const visible = pinsBetween(part, Math.max(0, top), top + innerHeight);
  if (visible.length === 0) return null;
  return { index: visible[0], offset: part.pins[visible[0]].frame.y - top };
}

let switching = false;
async function switchBreakpoint() {
  const next = chooseBreakpoint();
  if (!next || next === part || switching) return scheduleRender();
  switching = true;
  try {
    const anchor = topPin();
    // The other breakpoint's pages, up to the one with the anchor pin (each fetched once, and kept).
    while (anchor && !next.pins[anchor.index] && !next.complete) await loadNextPage(next);
    for (const card of shown.values()) card.remove();
    shown.clear();
    part = next;
    showSize();
    const frame = anchor && part.pins[anchor.index]?.frame;
    if (frame) scrollTo(scrollX, originTop() + frame.y - Math.max(0, anchor.offset));
  } finally {
    switching = false;
  }
  // The window may have changed again meanwhile.
  if (chooseBreakpoint() !== part) return switchBreakpoint();
  scheduleRender();
}

// ---- Start ----------------------------------------------------------------------------------------------------

// Resolves once nothing is on its way (requests, fonts, a render) and the last frame is painted: for tests, and
// for anyone who wants to know when the page is still.
function settled() {
  return new Promise(resolve => {
    idleWaiters.push(resolve);
    settleIfIdle();
  });
}

function settleIfIdle() {
  if (idleWaiters.length === 0 || pending > 0 || renderPending || switching) return;
  requestAnimationFrame(() => requestAnimationFrame(() => {
    if (pending > 0 || renderPending || switching) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  }));
}

async function start() {
  if (!/^[0-9a-f]{32}$/.test(id)) throw new Error(`${location.pathname} names no layout`);
  // The style sheet needs only the id: it loads while the layout is asked for.
  const style = loadStyle();
  await track(async () => {
    layout = await fetchJSON(layoutURL);
    if (layout.status === 'failed' && layout.layouts.every(summary => summary.pages === 0)) {
      throw new Error(`The layout failed: ${layout.error?.message ?? 'no pages'}`);
    }
    parts = layout.layouts.map(makePart);
    part = chooseBreakpoint();
    showSize();
    await Promise.all([style, loadNextPage(part)]);
    ready = true;
  });
  addEventListener('scroll', scheduleRender, { passive: true });
  addEventListener('resize', () => track(switchBreakpoint));
  scheduleRender();
}

// What a test (or a page embedding the client) can ask: when the page is still, which breakpoint is shown,
// whether its last page is in, and the layout's status when the client last asked.
window.feedlayout = {
  settled,
  get breakpoint() { return part && { width: part.width, columns: part.columns }; },
  get complete() { return Boolean(part?.complete); },
  get layoutStatus() { return layout?.status; },
};
start().catch(fail);
