// Per-site xkey namespaces (PURGER_TAG_PREFIXES). xkey purges are not host-scoped, so a site's
// tag events may only name keys inside its own namespace. Keys are `<namespace>-<rest>`
// (wordpress-plugin/README.md), so the check compares on the separator: namespace `wp1` owns
// `wp1-p-42` but not `wp10-p-42`, `example.com` owns `example.com-p-1` but not `example.com.au-p-1`.

import { NAMESPACE_PATTERN } from './key-grammar.js';

export const NAMESPACE_SEPARATOR = '-';
const NAMESPACE = new RegExp(NAMESPACE_PATTERN);

/**
 * The namespace as configured, with one trailing separator dropped: `wp1-` (the form older
 * configurations used) and `wp1` are the same namespace. undefined when nothing is left.
 */
export function parseNamespace(value: string): string | undefined {
  const v = value.endsWith(NAMESPACE_SEPARATOR) ? value.slice(0, -1) : value;
  return v !== '' && NAMESPACE.test(v) && !v.endsWith(NAMESPACE_SEPARATOR) ? v : undefined;
}

/** Does `tag` belong to `namespace`? Only `<namespace>-<something>` does; the bare name does not. */
export function inNamespace(tag: string, namespace: string): boolean {
  return tag.length > namespace.length + 1 && tag.startsWith(namespace) && tag[namespace.length] === NAMESPACE_SEPARATOR;
}

/**
 * Pairs of sites whose namespaces overlap: `a` and `a-b` do, because `a-b-p-1` is inside both
 * (the separator may appear inside a namespace, e.g. `localhost-8080`). Each such pair would let
 * one site's secret purge the other's keys.
 */
export function overlappingNamespaces(namespaces: ReadonlyMap<string, string>): [string, string][] {
  const entries = [...namespaces.entries()];
  const out: [string, string][] = [];
  for (let i = 0; i < entries.length; i++) {
    for (let j = i + 1; j < entries.length; j++) {
      const [sa, a] = entries[i]!;
      const [sb, b] = entries[j]!;
      const pa = a + NAMESPACE_SEPARATOR;
      const pb = b + NAMESPACE_SEPARATOR;
      if (pa.startsWith(pb) || pb.startsWith(pa)) out.push([sa, sb]);
    }
  }
  return out;
}
