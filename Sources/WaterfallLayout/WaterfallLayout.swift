// WaterfallLayout module.
