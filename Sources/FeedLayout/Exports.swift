// A program that lays out feeds imports FeedLayout alone: the page model, options, cursors and records it works
// with live in LayoutPages, which the pipeline is built on, and the grid it configures (columns, insets, gaps,
// placement) in WaterfallLayout.
@_exported import LayoutPages
@_exported import WaterfallLayout
