// feedlayout.mjs: shows a layout that `feedlayout serve` precomputed, in any page, without measuring anything, so
// no card ever moves. An ES module with no dependencies and no build step; its types are in feedlayout.d.ts.
//
//   import { openLayout } from 'https://layouts.example.org/client/feedlayout.mjs';
//   const view = openLayout({ layoutId, container: document.querySelector('#pins') });
//   view.addEventListener('firstcards', () => console.log('the first cards are in'));
//   …
//   view.destroy();
//
// What it does, in this file's order:
//   1. Asks the service for the layout (GET /v1/layouts/{id}): its breakpoints and whether it is done.
//   2. Loads the layout's style sheet (its fonts and text styles) and its first page; places each card at its frame,
//      relative to the container's top-left corner.
//   3. As the reader scrolls, keeps only the cards near the viewport in the DOM, and fetches the next page by cursor
//      (GET /v1/pages?cursor=) before the reader reaches the end of the pages so far; each page is fetched once.
//   4. On resize, switches to the breakpoint that fits, keeping the pin at the top of the viewport in view.
//   5. Following a feed (feedId, follow), tells the page of each new version; showLayout() switches to one,
//      keeping the pin at the top of the viewport (matched by its key) where it is on the screen.
//
// The service at another origin must allow this page's origin (`feedlayout serve --cors-origin`): the layout, its
// pages and its fonts are read with CORS.

// How far beyond the viewport cards stay in the DOM, and how far ahead pages are fetched, in viewport heights.
const KEEP = 1;
const FETCH_AHEAD = 2;
// Pins are looked up by their vertical extent, in bands of this many CSS pixels.
const BAND = 1024;
const LAYOUT_ID = /^[0-9a-f]{32}$/;

/** The service the module was loaded from: the default `baseURL`. */
const moduleService = (() => {
  try {
    return new URL('/', import.meta.url).href.replace(/\/$/, '');
  } catch {
    return '';
  }
})();

/** Opens a layout in `options.container`; see feedlayout.d.ts for the options, the view and its events. */
export function openLayout(options) {
  return new LayoutView(options ?? {});
}

/** The breakpoint a width shows: the widest that fits it, else the narrowest (as the service's clients choose). */
export function chooseBreakpoint(breakpoints, width) {
  const byWidth = [...breakpoints].sort((a, b) => a.width - b.width);
  let chosen = byWidth[0] ?? null;
  for (const breakpoint of byWidth) if (breakpoint.width <= width) chosen = breakpoint;
  return chosen;
}

/** The text a card is named by (its `aria-label`): the title and the caption, else the photo's alt, else its place. */
export function cardLabel(item) {
  const parts = [item.annotation?.title?.text, item.annotation?.text?.text].filter(text => text && text.trim());
  if (parts.length === 0 && item.photo?.alt) parts.push(item.photo.alt);
  return parts.length > 0 ? parts.join('. ') : `Pin ${item.index + 1}`;
}

class LayoutView extends EventTarget {
  constructor(options) {
    super();
    const { container } = options;
    if (!container || typeof container.append !== 'function') {
      throw new TypeError('openLayout: options.container must be an element (the cards are placed inside it)');
    }
    if ((options.layoutId == null) === (options.feedId == null)) {
      throw new TypeError('openLayout: give options.layoutId or options.feedId (one of them)');
    }
    if (options.layoutId != null && !LAYOUT_ID.test(String(options.layoutId))) {
      throw new TypeError(`openLayout: options.layoutId '${String(options.layoutId).slice(0, 80)}' is not a layout id (32 hex digits)`);
    }
    if (options.renderCard != null && typeof options.renderCard !== 'function') {
      throw new TypeError('openLayout: options.renderCard must be a function (item, context) => Element');
    }
    const base = options.baseURL ?? moduleService;
    if (!/^https?:\/\//i.test(base)) {
      throw new TypeError(`openLayout: options.baseURL '${String(base).slice(0, 80)}' is not an http(s) URL of a feedlayout service`);
    }
    this.#base = String(base).replace(/\/+$/, '');
    this.#container = container;
    this.#options = options;
    this.#keep = options.keep ?? KEEP;
    this.#fetchAhead = options.fetchAhead ?? FETCH_AHEAD;
    this.#fetch = options.fetch ?? ((url, init) => fetch(url, init));
    this.#started = this.#start();
    this.#started.catch(error => this.#fail(error));
  }

  // ---- State ---------------------------------------------------------------------------------------------------

  #base;
  #container;
  #options;
  #keep;
  #fetchAhead;
  #fetch;
  #version = null;         // The layout shown (see #openVersion): its id, status and breakpoints.
  #part = null;            // The breakpoint shown.
  #shown = new Map();      // Pin index → its card in the DOM.
  #fonts = { title: '', caption: '' }; // CSS font shorthands, to ask document.fonts which faces a text needs.
  #fontsAsked = new Set(); // Pins whose fonts were asked for once (a font that fails to load never blocks them).
  #renderFrame = 0;        // The animation frame a render waits for, 0 when none.
  #pending = 0;            // Requests and font loads in flight.
  #idleWaiters = [];
  #firstCards = true;
  #firstCardPhotos = [];   // [img, URL] of the first cards, asked for one frame after them (see #render).
  #ready = false;          // Set once the layout, its style sheet and its first page are in.
  #destroyed = false;
  #switching = false;
  #focusIndex = null;      // The pin whose card had keyboard focus when the breakpoint changed.
  #aborter = new AbortController();
  #added = [];             // Elements this view added outside its container (style sheets), removed by destroy().
  #containerState = null;  // The container's attributes and styles before the view, restored by destroy().
  #listeners = [];         // [target, type, listener, options], removed by destroy().
  #events = null;          // The feed's EventSource (feedId with follow).
  #started;                // #start()'s promise.
  #showing = Promise.resolve(); // The last showLayout(), which the next one waits for.
  #followedFrom = null;    // When the version the view opened with was fetched: older events are not news.

  // ---- What a page can ask -------------------------------------------------------------------------------------

  /** The layout shown (its id), once known. */
  get layoutId() { return this.#version?.id ?? null; }
  /** The breakpoint shown: `{ index, width, columns }`, once the layout is in. */
  get breakpoint() {
    const part = this.#part;
    return part && { index: part.index, width: part.width, columns: part.columns };
  }
  /** Whether the shown breakpoint's last page is in. */
  get complete() { return Boolean(this.#part?.complete); }
  /** The layout's status when the view last asked (`running`, `done`, `failed`). */
  get layoutStatus() { return this.#version?.layout.status; }
  /** The service's answer to GET /v1/layouts/{id}, when the view last asked. */
  get layout() { return this.#version?.layout; }
  /** How many pages of the shown breakpoint are in, and how many the service had made when last asked. */
  get pages() {
    const part = this.#part;
    return part ? { loaded: part.pagesLoaded, made: part.pageCount } : { loaded: 0, made: 0 };
  }
  /** Whether destroy() was called. */
  get destroyed() { return this.#destroyed; }

  /** Resolves once nothing is on its way (requests, fonts, a render) and the last frame is painted. */
  settled() {
    if (this.#destroyed) return Promise.resolve();
    return new Promise(resolve => {
      this.#idleWaiters.push(resolve);
      this.#settleIfIdle();
    });
  }

  /**
   * Shows another layout in place of this one (a newer version of the same feed), keeping the reader's place: the
   * pin at the top of the viewport stays at the same screen position when the other layout has it (matched by its
   * `key`), else the view scrolls to the container's top. Nothing on the screen moves until the other layout's
   * cards can replace the shown ones in one frame. Resolves to `{ layoutId, anchored }`.
   */
  showLayout(layoutId) {
    const id = String(layoutId ?? '');
    if (!LAYOUT_ID.test(id)) {
      return Promise.reject(new TypeError(`showLayout: '${id.slice(0, 80)}' is not a layout id (32 hex digits)`));
    }
    // One switch at a time, in the order asked.
    const show = () => this.#track(() => this.#showVersion(id));
    this.#showing = this.#showing.then(show, show);
    return this.#showing;
  }

  /**
   * Takes away every card, listener and style sheet the view added, cancels its requests, and gives the container
   * its attributes and styles back. The view fires no event after it, and settled() resolves at once.
   */
  destroy() {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#aborter.abort();
    this.#events?.close();
    this.#events = null;
    if (this.#renderFrame) cancelAnimationFrame(this.#renderFrame);
    this.#renderFrame = 0;
    for (const [target, type, listener, options] of this.#listeners) target.removeEventListener(type, listener, options);
    this.#listeners = [];
    for (const card of this.#shown.values()) card.remove();
    this.#shown.clear();
    for (const element of this.#added) element.remove();
    this.#added = [];
    this.#firstCardPhotos = null;
    this.#restoreContainer();
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  // ---- Events --------------------------------------------------------------------------------------------------

  #emit(type, detail) {
    if (!this.#destroyed) this.dispatchEvent(new CustomEvent(type, { detail }));
  }

  #listen(target, type, listener, options) {
    target.addEventListener(type, listener, options);
    this.#listeners.push([target, type, listener, options]);
  }

  #fail(error) {
    if (this.#destroyed || error?.name === 'AbortError') return;
    this.#setBusy();
    // Nobody listening for errors: the console has it.
    if (this.dispatchEvent(new CustomEvent('error', { detail: error, cancelable: true }))) console.error(error);
  }

  // ---- Talking to the service ----------------------------------------------------------------------------------

  #url(path) { return this.#base + path; }
  #layoutPath(id) { return `/v1/layouts/${encodeURIComponent(id)}`; }

  async #fetchJSON(path) {
    const url = this.#url(path);
    const response = await this.#fetch(url, { signal: this.#aborter.signal, headers: this.#options.headers });
    const body = await response.json().catch(() => null);
    if (!response.ok) {
      const error = new Error(body?.detail ?? `${url}: HTTP ${response.status}`);
      error.problem = body;
      error.status = response.status;
      throw error;
    }
    return body;
  }

  // Counts the work in flight, so that settled() knows when the page is still, and the feed says it is busy.
  async #track(work) {
    this.#pending += 1;
    this.#setBusy();
    try {
      return await work();
    } finally {
      this.#pending -= 1;
      this.#setBusy();
      this.#scheduleRender();
    }
  }

  #setBusy() {
    if (this.#destroyed) return;
    this.#container.setAttribute('aria-busy', String(this.#pending > 0 || !this.#ready));
  }

  async #refreshLayout(version) {
    version.layout = await this.#fetchJSON(this.#layoutPath(version.id));
    for (const summary of version.layout.layouts) {
      if (version.parts[summary.index]) version.parts[summary.index].pageCount = summary.pages;
    }
    if (version === this.#version) this.#emit('layout', version.layout);
  }

  #isComplete(part) {
    return part.version.layout.status !== 'running' && part.pagesLoaded >= part.pageCount;
  }

  // Fetches a breakpoint's next page: the first by its index, every other by the cursor of the one before.
  // Each page is asked for once; a caller that comes while it is on its way gets the same promise.
  #loadNextPage(part) {
    if (part.loading || part.complete || this.#destroyed) return part.loading;
    part.loading = this.#track(async () => {
      const version = part.version;
      if (part.pagesLoaded >= part.pageCount && version.layout.status === 'running') await this.#refreshLayout(version);
      if (this.#isComplete(part)) {
        part.complete = true;
        return;
      }
      const path = part.pagesLoaded === 0
        ? `${this.#layoutPath(version.id)}/pages/0?layout=${part.index}`
        : `/v1/pages?cursor=${encodeURIComponent(part.cursor)}&layout=${encodeURIComponent(version.id)}`;
      const page = await this.#fetchJSON(path);
      if (this.#destroyed) return;
      this.#addPage(part, page);
      part.complete = this.#isComplete(part);
      if (part.complete && part === this.#part) this.#emit('complete', { breakpoint: this.breakpoint });
    }).catch(error => {
      // A page the service is still making (it waited ?wait= seconds for it): ask again on the next render.
      if (error.problem?.layoutStatus === 'running') return;
      this.#fail(error);
      part.complete = true;
    }).finally(() => {
      part.loading = null;
    });
    return part.loading;
  }

  // Loads a breakpoint's pages until `found()` or its last page; a page the service is still making is asked for
  // again a moment later.
  async #loadUntil(part, found) {
    while (!found() && !part.complete && !this.#destroyed) {
      const before = part.pagesLoaded;
      await this.#loadNextPage(part);
      if (part.pagesLoaded === before && !part.complete) await new Promise(resolve => setTimeout(resolve, 200));
    }
  }

  #addPage(part, page) {
    part.pagesLoaded += 1;
    part.cursor = page.cursor;
    part.contentHeight = page.contentHeight;
    for (const item of page.items) {
      part.pins[item.index] = item;
      if (item.key != null) part.byKey.set(item.key, item.index);
      const { y, height } = item.frame;
      for (let band = Math.floor(y / BAND); band <= Math.floor((y + height) / BAND); band++) {
        (part.bands[band] ??= []).push(item.index);
      }
    }
    if (part === this.#part) this.#showSize();
    if (part.version === this.#version) {
      this.#emit('page', { breakpoint: { index: part.index, width: part.width, columns: part.columns }, page });
    }
  }

  // A style sheet, once per document (another view of the same service may have added it already).
  #addStyleSheet(href) {
    for (const link of document.querySelectorAll('link[rel="stylesheet"]')) {
      if (link.href !== href) continue;
      if (link.sheet) return Promise.resolve();
      return new Promise((resolve, reject) => {
        link.addEventListener('load', resolve, { once: true });
        link.addEventListener('error', () => reject(new Error(`${href} did not load`)), { once: true });
      });
    }
    return new Promise((resolve, reject) => {
      const link = document.createElement('link');
      link.rel = 'stylesheet';
      link.href = href;
      link.onload = resolve;
      link.onerror = () => reject(new Error(`${href} did not load`));
      document.head.append(link);
      this.#added.push(link);
    });
  }

  // The layout's fonts and text styles, as the service measured with them, and the cards' own style sheet.
  #loadStyle(id) {
    const sheets = [this.#addStyleSheet(this.#styleURL(id))];
    if (this.#options.cardStyles !== false) sheets.push(this.#addStyleSheet(this.#url('/client/feedlayout.css')));
    return this.#track(() => Promise.all(sheets).then(() => {
      if (this.#destroyed) return;
      for (const role of ['title', 'caption']) {
        const probe = document.createElement('div');
        probe.className = `feedlayout-${role}`;
        probe.hidden = true;
        this.#container.append(probe);
        const style = getComputedStyle(probe);
        this.#fonts[role] = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
        probe.remove();
        // Every text needs the primary font: it loads now, while the first page is on its way.
        this.#track(() => document.fonts.load(this.#fonts[role]).catch(error => console.warn('a font did not load', error)));
      }
    }));
  }

  #styleURL(id) { return this.#url(`${this.#layoutPath(id)}/style.css`); }

  // ---- Cards ---------------------------------------------------------------------------------------------------

  // A photo's address: an http(s) URL as it is, a relative one from the service's image root (/files/).
  #photoURL(url) {
    if (/^https?:\/\//i.test(url)) return url;
    if (/^[a-z][a-z0-9+.-]*:|^\//i.test(url)) return null;
    return this.#url(`/files/${url}`);
  }

  #makeCard(item) {
    const context = {
      breakpoint: this.breakpoint, photoURL: url => this.#photoURL(url), place, label: cardLabel(item),
      firstCards: this.#firstCards,
    };
    let card;
    if (this.#options.renderCard) {
      card = this.#options.renderCard(item, context);
      if (!(card instanceof Element)) {
        throw new TypeError(`renderCard gave ${card === null ? 'null' : typeof card} for pin ${item.index}, not an element`);
      }
    } else {
      card = this.#defaultCard(item, context);
    }
    // What every card is, whoever drew it: an article of the feed at its pin's frame, named by its text.
    card.classList.add('feedlayout-card');
    card.dataset.index = item.index;
    card.setAttribute('role', 'article');
    if (!card.hasAttribute('aria-label') && !card.hasAttribute('aria-labelledby')) card.setAttribute('aria-label', context.label);
    card.setAttribute('aria-posinset', String(item.index + 1));
    card.setAttribute('aria-setsize', String(this.#setSize()));
    if (!card.hasAttribute('tabindex')) card.tabIndex = 0;
    card.style.position = 'absolute';
    card.style.boxSizing = 'border-box';
    place(card, item.frame);
    return card;
  }

  // The pins of the layout, when it is done; -1 (unknown) while it is still being made.
  #setSize() {
    const layout = this.#version?.layout;
    return layout?.status === 'running' ? -1 : (layout?.items ?? -1);
  }

  #defaultCard(item, context) {
    const frame = item.frame;
    const card = document.createElement('article');
    card.className = 'feedlayout-default-card';
    card.tabIndex = 0;
    // The slot shows the placeholder colour until the photo arrives, and stays when it never does.
    const photo = item.photo;
    const slot = document.createElement('div');
    slot.className = 'feedlayout-slot';
    place(slot, photo.slot, frame);
    if (photo.placeholder) slot.style.background = photo.placeholder.color;
    card.append(slot);
    // Only photos the service read (their size came from the file's header) are loaded.
    const source = photo.url && photo.sizeFrom === 'header' ? this.#photoURL(photo.url) : null;
    if (source) {
      const image = document.createElement('img');
      image.className = 'feedlayout-photo';
      image.alt = photo.alt ?? '';
      image.loading = 'lazy';
      image.decoding = 'async';
      image.width = Math.round(photo.frame.width);
      image.height = Math.round(photo.frame.height);
      place(image, photo.frame, frame);
      if (context.firstCards) this.#firstCardPhotos.push([image, source]);
      else image.src = source;
      card.append(image);
    }
    // The title is the card's link when the pin has one (http or https).
    const link = /^https?:\/\//i.test(item.link ?? '') ? item.link : null;
    for (const [role, block] of [['title', item.annotation?.title], ['caption', item.annotation?.text]]) {
      if (!block) continue;
      const isLink = role === 'title' && link;
      const text = document.createElement(isLink ? 'a' : 'div');
      if (isLink) text.href = link;
      text.className = `feedlayout-${role}`;
      place(text, block.frame, frame);
      text.textContent = block.text;
      // The first cards' text is timed by the browser (Element Timing): when the reader first sees the feed.
      if (context.firstCards) text.setAttribute('elementtiming', 'first-cards');
      card.append(text);
    }
    // A card with a link is reached by Tab through its link; the card itself by the feed's keys.
    if (link && item.annotation?.title) card.tabIndex = -1;
    return card;
  }

  // The characters of the pins' titles and of their captions, each once. Which fonts a text needs depends only on
  // its characters, and the browser looks up every character it is given: with the visible cards' whole text the
  // first render made 7,610 font lookups (66 ms in a Chromium trace), with its distinct characters 290 (27 ms).
  #characters(indices, part = this.#part) {
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
  #fontsReady(indices) {
    const needed = indices.filter(index => !this.#fontsAsked.has(index));
    if (needed.length === 0) return true;
    const text = this.#characters(needed);
    const fonts = this.#fonts;
    if (document.fonts.check(fonts.title, text.title) && document.fonts.check(fonts.caption, text.caption)) return true;
    for (const index of needed) this.#fontsAsked.add(index);
    this.#track(() => this.#loadFonts(text));
    return false;
  }

  // Loads the title's and the caption's fonts for these characters; a font that fails is only warned about.
  #loadFonts(text) {
    return Promise.all([document.fonts.load(this.#fonts.title, text.title), document.fonts.load(this.#fonts.caption, text.caption)])
      .catch(error => console.warn('a font did not load', error));
  }

  // Takes the shown cards away and shows `part` instead, scrolled by `scroll` px (the next render draws its cards).
  #showPart(part, scroll) {
    for (const card of this.#shown.values()) card.remove();
    this.#shown.clear();
    this.#part = part;
    this.#showSize();
    if (scroll) scrollBy(0, scroll);
  }

  // ---- Windowing -----------------------------------------------------------------------------------------------

  // The viewport's top, relative to the container's top-left corner.
  #viewTop() {
    return -this.#container.getBoundingClientRect().top;
  }

  // The pins of a breakpoint whose frames meet [from, to), in index order (reading order).
  #pinsBetween(part, from, to) {
    const found = new Set();
    for (let band = Math.max(0, Math.floor(from / BAND)); band <= Math.floor(to / BAND); band++) {
      for (const index of part.bands[band] ?? []) {
        const { y, height } = part.pins[index].frame;
        if (y < to && y + height > from) found.add(index);
      }
    }
    return [...found].sort((a, b) => a - b);
  }

  #scheduleRender() {
    if (this.#renderFrame || this.#destroyed) return;
    this.#renderFrame = requestAnimationFrame(() => {
      this.#renderFrame = 0;
      try {
        this.#render();
      } catch (error) {
        this.#fail(error);
      }
    });
  }

  #render() {
    if (!this.#ready || this.#destroyed) return;
    const part = this.#part;
    // The first cards' photos are asked for in the frame after the cards: their downloads and decoding would
    // otherwise share the CPU with painting the first cards (painted about 40 ms later, in alternating runs on two
    // busy cores). A card scrolled away meanwhile is gone; it is made anew, with its photo, when it comes back.
    if (!this.#firstCards && this.#firstCardPhotos) {
      for (const [image, source] of this.#firstCardPhotos) if (image.isConnected) image.src = source;
      this.#firstCardPhotos = null;
    }
    const top = this.#viewTop();
    // The first cards are the visible ones alone, so that they paint as soon as they can; the rest follow.
    const keep = this.#firstCards ? 0 : this.#keep;
    const wanted = new Set(this.#pinsBetween(part, top - innerHeight * keep, top + innerHeight * (1 + keep)));
    // The card that had focus before a breakpoint change comes back, and gets it again.
    const refocus = this.#focusIndex;
    if (refocus != null && part.pins[refocus]) wanted.add(refocus);
    for (const [index, card] of this.#shown) {
      // A card with keyboard focus stays, so that Tab goes on from it.
      if (wanted.has(index)) continue;
      if (card.contains(document.activeElement)) {
        wanted.add(index);
        continue;
      }
      card.remove();
      this.#shown.delete(index);
    }
    const order = [...wanted].sort((a, b) => a - b);
    const missing = order.filter(index => !this.#shown.has(index));
    if (missing.length > 0 && this.#fontsReady(missing)) {
      // Cards go into the DOM in index order, so that keyboard focus moves through them in reading order.
      let next = this.#container.firstElementChild;
      for (const index of order) {
        const existing = this.#shown.get(index);
        if (existing) {
          next = existing.nextElementSibling;
          continue;
        }
        const card = this.#makeCard(part.pins[index]);
        this.#container.insertBefore(card, next);
        this.#shown.set(index, card);
      }
      if (this.#firstCards) {
        this.#firstCards = false;
        performance.mark('feedlayout:first-cards');
        this.#emit('firstcards', { cards: this.#shown.size });
        this.#scheduleRender();
      }
    }
    if (refocus != null && this.#shown.has(refocus)) {
      this.#focusIndex = null;
      const card = this.#shown.get(refocus);
      (card.querySelector('a[href]') ?? card).focus({ preventScroll: true });
    }
    if (!part.complete && top + innerHeight * (1 + this.#fetchAhead) > part.contentHeight) this.#loadNextPage(part);
    this.#emit('render', { cards: this.#shown.size });
    this.#settleIfIdle();
  }

  #showSize() {
    const style = this.#container.style;
    style.width = `${this.#part.width}px`;
    style.height = `${this.#part.contentHeight}px`;
  }

  // ---- The container -------------------------------------------------------------------------------------------

  #claimContainer() {
    const container = this.#container;
    const attributes = ['role', 'aria-label', 'aria-busy', 'data-layout-origin'];
    this.#containerState = {
      attributes: attributes.map(name => [name, container.getAttribute(name)]),
      style: ['position', 'width', 'height'].map(name => [name, container.style.getPropertyValue(name)]),
    };
    if (getComputedStyle(container).position === 'static') container.style.position = 'relative';
    container.setAttribute('role', 'feed');
    if (!container.hasAttribute('aria-label') && !container.hasAttribute('aria-labelledby')) {
      container.setAttribute('aria-label', this.#options.label ?? 'Pins');
    }
    container.setAttribute('data-layout-origin', '');
    this.#setBusy();
  }

  #restoreContainer() {
    const state = this.#containerState;
    if (!state) return;
    const container = this.#container;
    for (const [name, value] of state.attributes) {
      if (value === null) container.removeAttribute(name);
      else container.setAttribute(name, value);
    }
    for (const [name, value] of state.style) container.style.setProperty(name, value);
    if (container.getAttribute('style') === '') container.removeAttribute('style');
  }

  // The feed's keys (WAI-ARIA feed pattern): Page Down and Page Up move to the next and the previous card.
  #onKey(event) {
    if (event.key !== 'PageDown' && event.key !== 'PageUp') return;
    const card = event.target.closest?.('[data-index]');
    if (!card || !this.#container.contains(card)) return;
    const index = Number(card.dataset.index) + (event.key === 'PageDown' ? 1 : -1);
    const pin = this.#part?.pins[index];
    if (!pin) return;
    event.preventDefault();
    this.#focusIndex = index;
    const target = this.#container.getBoundingClientRect().top + pin.frame.y;
    if (target < 0 || target + pin.frame.height > innerHeight) scrollBy(0, target - innerHeight / 3);
    this.#scheduleRender();
  }

  // ---- Breakpoints ---------------------------------------------------------------------------------------------

  // The breakpoint to show: by the window's width (a media query's), the container's, or the page's own choice.
  #chooseBreakpoint(version = this.#version) {
    const choice = this.#options.breakpoints ?? 'window';
    const summaries = version.parts.map(part => ({ index: part.index, width: part.width, columns: part.columns }));
    let chosen;
    if (typeof choice === 'function') {
      chosen = choice(summaries, innerWidth);
    } else if (choice === 'container') {
      const parent = this.#container.parentElement;
      chosen = chooseBreakpoint(summaries, parent ? parent.clientWidth : innerWidth);
    } else if (choice === 'window') {
      chosen = chooseBreakpoint(summaries, innerWidth);
    } else if (typeof choice === 'number') {
      chosen = summaries.find(summary => summary.width === choice);
      if (!chosen) throw new Error(`layout ${version.id} has no breakpoint ${choice} px (it has ${summaries.map(s => s.width).join(', ')})`);
    } else {
      throw new TypeError(`openLayout: options.breakpoints is 'window', 'container', a width, or a function, not ${String(choice).slice(0, 40)}`);
    }
    const index = typeof chosen === 'number' ? chosen : chosen?.index;
    const part = version.parts[index];
    if (!part) throw new Error(`options.breakpoints chose ${JSON.stringify(chosen)}, no breakpoint of layout ${version.id}`);
    return part;
  }

  // The pin at the top of the viewport: the first in reading order that is at least partly visible, and how far
  // below the viewport's top its frame begins.
  #topPin() {
    const top = this.#viewTop();
    const visible = this.#pinsBetween(this.#part, Math.max(0, top), top + innerHeight);
    if (visible.length === 0) return null;
    return { index: visible[0], offset: this.#part.pins[visible[0]].frame.y - top };
  }

  async #switchBreakpoint() {
    if (this.#destroyed || !this.#ready) return;
    const next = this.#chooseBreakpoint();
    if (next === this.#part || this.#switching) return this.#scheduleRender();
    this.#switching = true;
    try {
      const anchor = this.#topPin();
      const focused = [...this.#shown].find(([, card]) => card.contains(document.activeElement));
      // The other breakpoint's pages, up to the one with the anchor pin (each fetched once, and kept).
      if (anchor) await this.#loadUntil(next, () => Boolean(next.pins[anchor.index]));
      if (this.#destroyed) return;
      const frame = anchor && next.pins[anchor.index]?.frame;
      // The scroll that keeps the anchor pin where it is in the viewport (cut at the container's top).
      const scroll = frame ? frame.y - Math.max(0, anchor.offset) - this.#viewTop() : 0;
      this.#showPart(next, scroll);
      if (focused) this.#focusIndex = focused[0];
      this.#emit('breakpoint', this.breakpoint);
    } finally {
      this.#switching = false;
    }
    // The window may have changed again meanwhile.
    if (this.#chooseBreakpoint() !== this.#part) return this.#switchBreakpoint();
    this.#scheduleRender();
  }

  // ---- Start ---------------------------------------------------------------------------------------------------

  #settleIfIdle() {
    if (this.#destroyed || this.#idleWaiters.length === 0 || this.#pending > 0 || this.#renderFrame || this.#switching) return;
    requestAnimationFrame(() => requestAnimationFrame(() => {
      if (this.#pending > 0 || this.#renderFrame || this.#switching) return;
      const waiters = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const resolve of waiters) resolve();
    }));
  }

  // A feed's layout: the latest the service made of it (GET /v1/feeds/{id}); with `follow`, each new one as the
  // feed's events announce it (GET /v1/feeds/{id}/events, `version` events).
  async #feedLayout() {
    const feedId = String(this.#options.feedId);
    const feed = await this.#fetchJSON(`/v1/feeds/${encodeURIComponent(feedId)}`);
    // `latest`: the newest finished layout of the feed, null before the first.
    const id = feed.latest;
    if (typeof id !== 'string' || !LAYOUT_ID.test(id)) {
      throw new Error(`feed ${feedId} has no layout yet (GET /v1/feeds/${feedId} named none)`);
    }
    this.#followedFrom = (feed.versions ?? []).find(version => version.layout === id)?.fetchedAt ?? null;
    return id;
  }

  // A layout's status and its breakpoints, with no page loaded yet.
  async #openVersion(id) {
    const layout = await this.#fetchJSON(this.#layoutPath(id));
    if (layout.status === 'failed' && layout.layouts.every(summary => summary.pages === 0)) {
      throw new Error(`layout ${id} failed: ${layout.error?.message ?? 'no pages'}`);
    }
    const version = { id, layout, parts: [], styleId: id };
    version.parts = layout.layouts.map(summary => ({
      version, index: summary.index, width: summary.width, columns: summary.columns, pageCount: summary.pages,
      pagesLoaded: 0, cursor: null, contentHeight: 0, pins: [], byKey: new Map(), bands: [], loading: null,
      complete: false,
    }));
    return version;
  }

  // The style sheet a new version is shown with. Versions of one feed share their options, so their sheets differ
  // only in the layout id of their font URLs (the files are named by their digest): the shown sheet and its loaded
  // fonts then serve the new version too, and no text waits for a font again. Any other sheet is loaded.
  async #styleFor(version) {
    const init = { signal: this.#aborter.signal, headers: this.#options.headers };
    const text = id => this.#fetch(this.#styleURL(id), init).then(response => (response.ok ? response.text() : null));
    const shownId = this.#version.styleId;
    const [next, shown] = await Promise.all([text(version.id), text(shownId)]);
    if (next != null && next.replaceAll(`/v1/layouts/${version.id}/`, `/v1/layouts/${shownId}/`) === shown) {
      version.styleId = shownId;
    } else {
      await this.#loadStyle(version.id);
    }
  }

  async #showVersion(id) {
    await this.#started;
    if (this.#destroyed || id === this.#version.id) return { layoutId: this.layoutId, anchored: !this.#destroyed };
    this.#switching = true;
    try {
      const version = await this.#openVersion(id);
      const style = this.#styleFor(version);
      const next = version.parts.find(part => part.width === this.#part.width) ?? this.#chooseBreakpoint(version);
      await this.#loadUntil(next, () => next.pagesLoaded > 0);
      // The pages up to the pin now at the top of the viewport (the reader may scroll meanwhile: asked again).
      let anchor, key;
      for (;;) {
        anchor = this.#topPin();
        key = anchor ? this.#part.pins[anchor.index]?.key : null;
        if (key == null || next.byKey.has(key) || next.complete || this.#destroyed) break;
        await this.#loadUntil(next, () => next.byKey.has(key));
      }
      await style;
      const index = key == null ? undefined : next.byKey.get(key);
      const top = index === undefined ? 0 : next.pins[index].frame.y - anchor.offset;
      // The fonts of the cards the new place shows, before anything changes on the screen.
      const wanted = this.#pinsBetween(next, top - innerHeight * this.#keep, top + innerHeight * (1 + this.#keep));
      await this.#loadFonts(this.#characters(wanted, next));
      if (this.#destroyed) return { layoutId: this.layoutId, anchored: false };
      // One frame: the cards of the shown version go, the new version's come at the same screen place (the
      // anchor's place now: the reader may have scrolled while the pages came).
      const shown = this.#version;
      const offset = index === undefined ? 0 : this.#part.pins[anchor.index].frame.y - this.#viewTop();
      const widthChanged = next.width !== this.#part.width;
      const scroll = index !== undefined ? next.pins[index].frame.y - offset - this.#viewTop() : Math.min(0, -this.#viewTop());
      this.#version = version;
      this.#fontsAsked = new Set();
      this.#showPart(next, scroll);
      if (shown.styleId !== version.styleId) {
        const old = this.#styleURL(shown.styleId);
        for (const link of this.#added.filter(element => element.href === old)) link.remove();
        this.#added = this.#added.filter(element => element.href !== old);
      }
      this.#emit('layout', version.layout);
      if (widthChanged) this.#emit('breakpoint', this.breakpoint);
      if (next.complete) this.#emit('complete', { breakpoint: this.breakpoint });
      this.#render();
      return { layoutId: id, anchored: index !== undefined };
    } finally {
      this.#switching = false;
      if (!this.#destroyed && this.#chooseBreakpoint() !== this.#part) this.#switchBreakpoint().catch(error => this.#fail(error));
    }
  }

  async #start() {
    this.#claimContainer();
    this.#listen(this.#container, 'keydown', event => this.#onKey(event));
    await this.#track(async () => {
      const id = this.#options.layoutId != null ? String(this.#options.layoutId) : await this.#feedLayout();
      // The style sheet needs only the id: it loads while the layout is asked for.
      const style = this.#loadStyle(id);
      this.#version = await this.#openVersion(id);
      this.#emit('layout', this.#version.layout);
      this.#part = this.#chooseBreakpoint();
      this.#showSize();
      this.#emit('breakpoint', this.breakpoint);
      await Promise.all([style, this.#loadNextPage(this.#part)]);
      if (this.#destroyed) return;
      this.#ready = true;
    });
    if (this.#destroyed) return;
    const render = () => this.#scheduleRender();
    // Capturing: the scrolls of any element the container is inside, the window's among them.
    this.#listen(document, 'scroll', render, { passive: true, capture: true });
    this.#listen(window, 'resize', () => this.#track(() => this.#switchBreakpoint()).catch(error => this.#fail(error)));
    if (this.#options.feedId != null && this.#options.follow) this.#follow();
    this.#scheduleRender();
  }

  // Tells the page of each new version of the feed (`version` event); the page shows it with showLayout() if it
  // wants. The stream first replays the feed's past events: those of the version shown and older ones are not news.
  #follow() {
    const url = this.#url(`/v1/feeds/${encodeURIComponent(String(this.#options.feedId))}/events`);
    this.#events = new EventSource(url);
    this.#events.addEventListener('version', message => {
      let detail = message.data;
      try {
        detail = JSON.parse(message.data);
      } catch {
        // A version event whose data is not JSON is passed on as its text.
      }
      const fetchedAt = detail?.fetchedAt;
      if (this.#followedFrom && typeof fetchedAt === 'string' && fetchedAt <= this.#followedFrom) return;
      this.#emit('version', detail);
    });
  }
}

/** Places an element at a rectangle given relative to its parent's top-left corner. */
export function place(element, rect, parent = { x: 0, y: 0 }) {
  element.style.left = `${rect.x - parent.x}px`;
  element.style.top = `${rect.y - parent.y}px`;
  element.style.width = `${rect.width}px`;
  element.style.height = `${rect.height}px`;
}
