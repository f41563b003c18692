// Types of feedlayout.mjs and of what it reads: `feedlayout.page/1` pages (schemas/feedlayout.page-1.schema.json)
// and the service's layout status (GET /v1/layouts/{id}). `scripts/check-js-types` holds them against the schema's
// pages with `tsc --noEmit`.

// ---- feedlayout.page/1 --------------------------------------------------------------------------------------------

/** A rectangle in CSS pixels; `x`/`y` relative to the layout's top-left corner (a pin's parts: to the layout's too). */
export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface FontFile {
  family: string;
  style: string;
  file: string;
  faceIndex: number;
  /** `sha256:` and 64 hex digits. */
  digest: string;
}

export interface PageLayout {
  width: number;
  scale: number;
  fonts: { title: FontFile[]; caption: FontFile[] };
  columns?: number;
  columnWidth?: number;
  contentWidth?: number;
  direction?: 'leftToRight' | 'rightToLeft';
  placement?: 'shortestFirst' | 'leftToRight' | 'rightToLeft' | 'gridLanes';
  mode?: 'flow';
  axis?: 'horizontal';
  height?: number;
  rowPhotoHeight?: number;
  alignment?: 'start' | 'end' | 'dataEnd' | 'center' | 'justified';
  follow?: boolean;
  itemGap?: number;
}

export interface TextBlock {
  frame: Rect;
  text: string;
  lines: number;
  truncated: boolean;
}

export interface Warning {
  code: string;
  message: string;
  line?: number;
  column?: number;
}

export interface Photo {
  frame: Rect;
  slot: Rect;
  /** As the feed gave it: http(s), or relative to the service's image root (served at /files/). */
  url: string | null;
  width: number;
  height: number;
  sizeFrom: 'header' | 'declared' | 'fallback';
  /** The photo's alternative text, when the feed gives one (media:description / media:title, <img alt>, a JSON Feed attachment's title). */
  alt?: string;
  format?: 'jpeg' | 'png' | 'gif' | 'webp' | 'bmp';
  orientation?: number;
  /** With `--placeholders`: the photo's average colour (`#rrggbb`) and its ThumbHash (base64). */
  placeholder?: { color: string; thumbHash: string };
  /** The schema lets a photo carry members it does not name. */
  [member: string]: unknown;
}

export interface PageItem {
  index: number;
  id: string;
  /** The item's identity across versions of a feed (16 hex digits, a digest of its id). */
  key?: string;
  link: string | null;
  column: number;
  columnSpan: number;
  frame: Rect;
  photo: Photo;
  annotation: { frame: Rect; title: TextBlock | null; text: TextBlock | null };
  warnings: Warning[];
  section?: number;
}

export interface SectionEvent {
  event: 'start' | 'end';
  index: number;
  key?: string;
  start: number;
  end?: number;
  firstItem?: number | null;
  lastItem?: number | null;
  header: Rect | null;
  footer?: Rect | null;
  decoration?: Rect | null;
}

export interface PageQuality {
  columnImbalance: number;
  whitespaceArea: number;
  orderInversions: number;
  largestDisplacement: number;
  soFar: { orderInversions: number; largestDisplacement: number };
}

/** One page of a layout (`feedlayout.page/1`). */
export interface Page {
  schema: 'feedlayout.page/1';
  feed?: string;
  page: { index: number; itemCount: number; firstItem: number | null; lastItem: number | null; top: number; bottom: number };
  layout: PageLayout;
  sections?: SectionEvent[];
  items: PageItem[];
  columnHeights: number[];
  contentHeight: number;
  quality: PageQuality;
  /** The next page's cursor (GET /v1/pages?cursor=), null on the last page. */
  cursor: string | null;
}

// ---- The service's layout status (GET /v1/layouts/{id}) -----------------------------------------------------------

export interface BreakpointSummary {
  /** The `layout` query parameter that selects this width. */
  index: number;
  width: number;
  columns: number;
}

export interface LayoutSummary extends BreakpointSummary {
  pages: number;
  contentHeight: number;
}

export interface LayoutStatus {
  id: string;
  status: 'running' | 'done' | 'failed';
  items: number;
  pages: number;
  warnings: Record<string, number>;
  error?: { code: string; message: string };
  layouts: LayoutSummary[];
  links: { self: string; pages: string };
}

// ---- The module ---------------------------------------------------------------------------------------------------

/** What a `renderCard` is given beside the pin. */
export interface CardContext {
  /** The breakpoint shown. */
  breakpoint: BreakpointSummary;
  /** A photo's address to load: http(s) as it is, a relative URL from the service's image root; null for others. */
  photoURL(url: string): string | null;
  /** Places an element at a rectangle, relative to `parent`'s top-left corner (a pin's parts: `item.frame`). */
  place(element: HTMLElement, rect: Rect, parent?: { x: number; y: number }): void;
  /** The card's accessible name (title and caption, else the photo's alt, else "Pin N"). */
  label: string;
  /** Whether this card is among the first cards shown (their photos are best asked for after the first paint). */
  firstCards: boolean;
}

/**
 * Draws a pin's card. The module then makes it an article of the feed (`role="article"`, `aria-posinset`,
 * `aria-setsize`, `aria-label` unless the card names itself, `tabindex` unless it has one, `data-index`, class
 * `feedlayout-card`) and places it at the pin's frame; the card's contents are the renderer's own.
 */
export type RenderCard = (item: PageItem, context: CardContext) => HTMLElement;

/** Chooses the breakpoint to show for a width (CSS px): one of `breakpoints`, or its `index`. */
export type BreakpointChooser = (breakpoints: BreakpointSummary[], windowWidth: number) => BreakpointSummary | number;

export interface OpenLayoutOptions {
  /** The service, e.g. `https://layouts.example.org`; by default the origin the module was loaded from. */
  baseURL?: string;
  /** The layout to show (32 hex digits). Give this or `feedId`. */
  layoutId?: string;
  /**
   * A subscribed feed (GET /v1/feeds/{id}): its `latest` layout is shown. Needs the service's subscription routes.
   */
  feedId?: string;
  /** With `feedId`: listen to the feed's events (GET /v1/feeds/{id}/events) and fire `version` for each new one. */
  follow?: boolean;
  /** The element the cards are placed in (relative to its top-left corner); it becomes the `role="feed"`. */
  container: HTMLElement;
  /** Draws the cards; by default the module's own card (photo, title as the link, caption). */
  renderCard?: RenderCard;
  /**
   * Which breakpoint to show: `'window'` (default: the widest that fits the window's width, else the narrowest),
   * `'container'` (the same for the container's parent's width), a width the layout has, or a function.
   */
  breakpoints?: 'window' | 'container' | number | BreakpointChooser;
  /** Load the cards' style sheet (`/client/feedlayout.css` of the service); default true. */
  cardStyles?: boolean;
  /** The feed's accessible name (`aria-label` of the container, unless it has one); default "Pins". */
  label?: string;
  /** How far beyond the viewport cards stay in the DOM, in viewport heights (default 1). */
  keep?: number;
  /** How far ahead of the viewport pages are fetched, in viewport heights (default 2). */
  fetchAhead?: number;
  /** Headers for every request to the service (e.g. `Authorization: Bearer …` for private reads). */
  headers?: Record<string, string>;
  /** The fetch the view uses (default: the page's). */
  fetch?: (input: string, init?: RequestInit) => Promise<Response>;
}

/** The data of a feed's `version` event (GET /v1/feeds/{id}/events). */
export interface FeedVersionEvent {
  /** The subscription. */
  subscription: string;
  /** The new version's layout id. */
  layout: string;
  items: number;
  fetchedAt: string;
  /** Items added, removed and changed since the version before, matched by their identity (`key`). */
  changes: { added: number; removed: number; changed: number };
}

export interface LayoutViewEventMap {
  /** The layout's status, each time the view asks for it. */
  layout: CustomEvent<LayoutStatus>;
  /** A page arrived. */
  page: CustomEvent<{ breakpoint: BreakpointSummary; page: Page }>;
  /** The breakpoint shown, at the start and after each switch. */
  breakpoint: CustomEvent<BreakpointSummary>;
  /** The first cards are in the DOM (the `feedlayout:first-cards` performance mark is set with it). */
  firstcards: CustomEvent<{ cards: number }>;
  /** The shown breakpoint's last page is in. */
  complete: CustomEvent<{ breakpoint: BreakpointSummary }>;
  /** After each render: how many cards are in the DOM. */
  render: CustomEvent<{ cards: number }>;
  /** With `feedId` and `follow`: a new version of the feed, its first page stored (show it with `showLayout`). */
  version: CustomEvent<FeedVersionEvent>;
  /** Something failed (the view goes on where it can); `preventDefault()` keeps it off the console. */
  error: CustomEvent<Error & { problem?: unknown; status?: number }>;
}

export interface LayoutView extends EventTarget {
  readonly layoutId: string | null;
  readonly breakpoint: BreakpointSummary | null;
  readonly complete: boolean;
  readonly layoutStatus: LayoutStatus['status'] | undefined;
  readonly layout: LayoutStatus | null;
  readonly pages: { loaded: number; made: number };
  readonly destroyed: boolean;
  /** Resolves once nothing is on its way (requests, fonts, a render) and the last frame is painted. */
  settled(): Promise<void>;
  /**
   * Shows another layout (a newer version of the same feed) in its place, keeping the reader's place: the pin at the
   * top of the viewport stays where it is on the screen when the other layout has it (matched by `key`), else the
   * view scrolls to the container's top. Calls run one after another.
   */
  showLayout(layoutId: string): Promise<{ layoutId: string; anchored: boolean }>;
  /** Removes every card, listener and style sheet the view added, cancels its requests, restores the container. */
  destroy(): void;
  addEventListener<K extends keyof LayoutViewEventMap>(
    type: K, listener: (event: LayoutViewEventMap[K]) => void, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof LayoutViewEventMap>(
    type: K, listener: (event: LayoutViewEventMap[K]) => void, options?: boolean | EventListenerOptions): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | EventListenerOptions): void;
}

/** Opens a layout in `options.container`. Throws a TypeError naming the option when the options are wrong. */
export function openLayout(options: OpenLayoutOptions): LayoutView;

/** The breakpoint a width shows: the widest that fits, else the narrowest; null when there is none. */
export function chooseBreakpoint<B extends { width: number }>(breakpoints: readonly B[], width: number): B | null;

/** A card's accessible name: the title and the caption, else the photo's alt, else "Pin N". */
export function cardLabel(item: PageItem): string;

/** Places an element at a rectangle, relative to `parent`'s top-left corner. */
export function place(element: HTMLElement, rect: Rect, parent?: { x: number; y: number }): void;
