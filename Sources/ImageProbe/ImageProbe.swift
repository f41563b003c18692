// ImageProbe module.
