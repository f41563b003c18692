// FeedIngest module.
