// The grammar of surrogate keys (xkey) and of a site's key namespace, declared once here; the
// plugin declares the same (testdata/key-grammar.json is the reference both are tested against).

/** A tag (xkey key) of a `tags` event. */
export const KEY_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$';
/** A site's key namespace (PURGER_TAG_PREFIXES): its keys are `<namespace>-…`. */
export const NAMESPACE_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,47}$';
