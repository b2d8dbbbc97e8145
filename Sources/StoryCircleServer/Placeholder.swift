// placeholder while the package is being built up
