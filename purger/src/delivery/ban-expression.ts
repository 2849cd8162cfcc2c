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

export interface PackedRegex {
  regex: string;
  /** the literals this regex matches */
  members: string[];
}

/**
 * Packs literal paths into as few anchored alternations as fit `budget` bytes each:
 * `^(?:a|b|…)` for prefixes, `^(?:a|b|…)$` for exact paths. A single literal longer than the
 * budget still gets its own regex (URLs are ≤ 2048 chars).
 */
export function packRegexes(literals: readonly string[], budget: number, exact: boolean): PackedRegex[] {
  const out: PackedRegex[] = [];
  const end = exact ? '$' : '';
  let group: string[] = [];
  let members: string[] = [];
  let size = 0;
  const flush = (): void => {
    if (group.length === 0) return;
    out.push({ regex: checked(group.length === 1 ? `^${group[0]}${end}` : `^(?:${group.join('|')})${end}`), members });
    group = [];
    members = [];
    size = 0;
  };
  for (const literal of new Set(literals)) {
    const e = escapeRegex(literal);
    if (group.length > 0 && size + e.length + 1 + 8 > budget) flush();
    group.push(e);
    members.push(literal);
    size += e.length + 1;
  }
  flush();
  return out;
}

/** Prefix bans: `^(?:a|b|…)` groups within the budget. */
export function packPrefixRegexes(prefixes: readonly string[], budget: number): string[] {
  return packRegexes(prefixes, budget, false).map((p) => p.regex);
}
