// FeedLayout module.
