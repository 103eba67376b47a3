enum PasteboardPlaceholder {}
