// Reads the environment against the settings schema: every variable parsed by its declared type
// and checked against its bounds, every problem collected (an operator fixes them all at once).
import { readFileSync } from 'node:fs';
import { Kind, type TSchema } from '@sinclair/typebox';
import { Settings, type SettingValues } from './settings.js';

export type Env = Record<string, string | undefined>;
type ReadFile = (path: string) => string;

/** the keywords settings.ts adds to TypeBox's */
interface SettingSchema {
  [Kind]: string;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxItems?: number;
  pattern?: string;
  anyOf?: { const: string }[];
  items?: SettingSchema;
  secret?: boolean;
  redact?: boolean;
  expected?: string;
  split?: string;
  increasing?: boolean;
  zeroIsNone?: boolean;
}

const isWhole = (s: string): boolean => /^[0-9]+$/.test(s);
/** ASCII whitespace only, as the VCL trims the same token (microcache/purge-token.vcl): a byte-order mark stays and is refused on both sides. */
const trimAscii = (s: string): string => s.replace(/^[\t\n\v\f\r ]+|[\t\n\v\f\r ]+$/g, '');

/**
 * A secret given either inline (`NAME`) or as a file (`NAME_FILE`, e.g. a Docker secret; its
 * content trimmed). Problems name the variable and the file, never the value.
 */
function secretFromEnv(env: Env, name: string, problems: string[], read: ReadFile = (p) => readFileSync(p, 'utf8')): string | undefined {
  const inline = (env[name] !== undefined ? trimAscii(env[name]) : '') || undefined;
  const file = env[`${name}_FILE`]?.trim() || undefined;
  if (inline !== undefined && file !== undefined) {
    problems.push(`${name} and ${name}_FILE: set one, not both`);
    return undefined;
  }
  if (file === undefined) return inline;
  try {
    const value = trimAscii(read(file));
    if (value === '') problems.push(`${name}_FILE="${file}": the file is empty`);
    return value === '' ? undefined : value;
  } catch (err) {
    problems.push(`${name}_FILE="${file}": cannot read it (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    return undefined;
  }
}

function readInteger(name: string, raw: string, s: SettingSchema, problems: string[]): number | undefined {
  const min = s.minimum ?? 0;
  const max = s.maximum ?? Number.MAX_SAFE_INTEGER;
  if (!isWhole(raw)) {
    problems.push(`${name}="${raw}": expected a whole number between ${min} and ${max}`);
    return s.default as number | undefined;
  }
  const n = Number(raw);
  if (n < min || n > max) problems.push(`${name}=${n}: must be between ${min} and ${max}`);
  return n;
}

function readIntegerList(name: string, raw: string, s: SettingSchema, problems: string[]): number[] {
  const parts = raw.split(',').map((p) => p.trim()).filter((p) => p !== '');
  if (parts.length === 0 || (s.zeroIsNone && parts.length === 1 && parts[0] === '0')) return [];
  const values = parts.map(Number);
  const item = s.items ?? ({} as SettingSchema);
  const bad =
    parts.length > (s.maxItems ?? Infinity) ||
    parts.some((p) => !isWhole(p)) ||
    values.some((v) => v < (item.minimum ?? 0) || v > (item.maximum ?? Number.MAX_SAFE_INTEGER)) ||
    (s.increasing === true && values.some((v, i) => i > 0 && v <= values[i - 1]!));
  if (!bad) return values;
  problems.push(`${name}="${raw}": ${s.expected ?? 'expected comma-separated whole numbers'}`);
  return s.default as number[];
}

function readString(name: string, value: string, s: SettingSchema, problems: string[]): string {
  const hidden = s.secret === true || s.redact === true;
  const bad = (s.minLength !== undefined && value.length < s.minLength) || (s.pattern !== undefined && !new RegExp(s.pattern).test(value));
  if (bad) problems.push(`${name}${hidden ? '' : `="${value}"`}: ${s.expected ?? `must match ${s.pattern}`}`);
  return value;
}

function readOne(env: Env, name: string, s: SettingSchema, problems: string[], read?: ReadFile): unknown {
  if (s.secret) {
    const value = secretFromEnv(env, name, problems, read);
    if (value === undefined) return s.default;
    return s.split !== undefined ? value.split(new RegExp(s.split)).map((v) => v.trim()).filter((v) => v !== '') : readString(name, value, s, problems);
  }
  const raw = env[name]?.trim() ?? '';
  if (s[Kind] === 'Array') {
    if (s.items?.[Kind] === 'Integer') return env[name] === undefined ? s.default : readIntegerList(name, raw, s, problems);
    return raw.split(s.split !== undefined ? new RegExp(s.split) : ',').map((v) => v.trim()).filter((v) => v !== '');
  }
  if (raw === '') return s.default;
  switch (s[Kind]) {
    case 'Integer':
      return readInteger(name, raw, s, problems);
    case 'Union': {
      const allowed = (s.anyOf ?? []).map((l) => l.const);
      if (allowed.includes(raw)) return raw;
      problems.push(`${name}="${raw}": expected ${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)}`);
      return s.default;
    }
    default:
      return readString(name, raw, s, problems);
  }
}

/** Every setting of the schema from `env` (defaults for what is unset); problems are appended. */
export function readSettings(env: Env, problems: string[], read?: ReadFile): SettingValues {
  const out: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(Settings.properties) as [string, TSchema][]) {
    out[name] = readOne(env, name, schema as unknown as SettingSchema, problems, read);
  }
  return out as SettingValues;
}
