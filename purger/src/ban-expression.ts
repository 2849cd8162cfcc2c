// Builds the X-Ban-Url regex for prefix bans. Input never reaches Varnish unescaped: every regex
// metacharacter is escaped, the result is anchored, and anything outside the protocol's allowed
// alphabet (printable ASCII without space or ") is refused rather than sent.
const META = /[\\^$.|?*+()[\]{}]/g;
const ALLOWED = /^[!#-~]+$/;

export function escapeRegex(literal: string): string {
  return literal.replace(META, '\\$&');
}

export class UnsafeBanError extends Error {}

function checked(expr: string): string {
  if (!ALLOWED.test(expr)) throw new UnsafeBanError('ban regex contains a space, " or non-printable character');
  return expr;
}

/** `^<escaped prefix>` for one path prefix. */
export function prefixRegex(prefix: string): string {
  return checked(`^${escapeRegex(prefix)}`);
}

/**
 * Packs path prefixes into as few anchored alternations `^(?:a|b|…)` as fit `budget` bytes each.
 * A single prefix longer than the budget still gets its own regex (URLs are ≤ 2048 chars).
 */
export function packPrefixRegexes(prefixes: readonly string[], budget: number): string[] {
  const escaped = [...new Set(prefixes)].map(escapeRegex);
  const out: string[] = [];
  let group: string[] = [];
  let size = 0;
  const flush = (): void => {
    if (group.length === 0) return;
    out.push(checked(group.length === 1 ? `^${group[0]}` : `^(?:${group.join('|')})`));
    group = [];
    size = 0;
  };
  for (const e of escaped) {
    if (group.length > 0 && size + e.length + 1 + 6 > budget) flush();
    group.push(e);
    size += e.length + 1;
  }
  flush();
  return out;
}
