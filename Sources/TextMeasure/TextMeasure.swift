// TextMeasure module.
