// src/ in layers: every import points down a layer or stays inside its own folder, and no module
// reaches itself again through its imports. Every import counts: `import type`, `export … from`
// and `import()` (TypeScript's own scanner reads them, not a regex).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = join(dirname(fileURLToPath(import.meta.url)), '..', 'src');

/**
 * The layers, bottom first. A module may import its own folder and any lower layer; the folders
 * of one layer are peers and import nothing of each other.
 */
const LAYERS: readonly (readonly string[])[] = [
  // the event model and the grammars of docs/protocol.md (events, URLs, keys, namespaces,
  // webhook secrets), metrics, logs: plain code every layer above uses
  ['model/', 'metrics.ts', 'logger.ts'],
  // the settings and the Config built from them
  ['config/'],
  // Redis: the connection and the log
  ['store/'],
  // accepting batches into the log; applying the log to the Varnish nodes
  ['ingest/', 'delivery/'],
  // the HTTP API over ingest and the log
  ['http/'],
  // the composition root, then the process entry
  ['service.ts'],
  ['main.ts'],
];

/** `file` (relative to src/, with `/`) → the folder or file of LAYERS that holds it, and its layer. */
function placeOf(file: string): { group: string; layer: number } | undefined {
  for (const [layer, groups] of LAYERS.entries()) {
    const group = groups.find((g) => (g.endsWith('/') ? file.startsWith(g) : file === g));
    if (group !== undefined) return { group, layer };
  }
  return undefined;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? sourceFiles(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : []));
}

const rel = (path: string): string => relative(SRC, path).split('\\').join('/');

/** Every module of `src` → the modules of `src` it imports (relative to src/). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const path of sourceFiles(SRC)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(path, 'utf8'), true, true);
    const targets = importedFiles
      .map((i) => i.fileName)
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => {
        const target = join(dirname(path), spec.replace(/\.js$/, '.ts'));
        if (!existsSync(target)) throw new Error(`${rel(path)} imports ${spec}, which is not a file of src/`);
        return rel(target);
      });
    graph.set(rel(path), [...new Set(targets)]);
  }
  return graph;
}

/** Imports that point up a layer or sideways into a peer folder, as `file → import (why)`. */
function upwardImports(graph: Map<string, string[]>): string[] {
  const out: string[] = [];
  for (const [file, targets] of graph) {
    const from = placeOf(file);
    if (from === undefined) {
      out.push(`${file}: in no layer (add its folder to LAYERS in test/layers.test.ts)`);
      continue;
    }
    for (const target of targets) {
      const to = placeOf(target);
      if (to === undefined || to.group === from.group || to.layer < from.layer) continue;
      const why = to.layer === from.layer ? `${from.group} and ${to.group} are peers` : `${to.group} is above ${from.group}`;
      out.push(`${file} → ${target} (${why})`);
    }
  }
  return out.sort();
}

/** Every circle of imports, as `a → b → … → a` (one per strongly connected group of modules). */
function importCycles(graph: Map<string, string[]>): string[] {
  // Tarjan's strongly connected components; a component of two or more modules is a circle.
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    const self = (graph.get(v) ?? []).includes(v);
    if (component.length > 1 || self) out.push(circleThrough(graph, new Set(component), component.sort()[0]!));
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return out.sort();
}

/** One concrete circle inside `component`, from `start` back to it. */
function circleThrough(graph: Map<string, string[]>, component: Set<string>, start: string): string {
  const prev = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of graph.get(v) ?? []) {
      if (!component.has(w)) continue;
      if (w === start) {
        const path = [v];
        while (path[0] !== start) path.unshift(prev.get(path[0]!)!);
        return [...path, start].join(' → ');
      }
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return start;
}

describe('the layers of src/', () => {
  const graph = importGraph();

  it('reads every module and its imports', () => {
    expect(graph.size).toBeGreaterThan(40);
    expect(graph.get('service.ts')).toContain('config/load.ts');
    // a type-only import counts like any other
    expect(graph.get('delivery/coalesce.ts')).toContain('model/event-model.ts');
  });

  it('has every import point down a layer or stay inside its folder', () => {
    expect(upwardImports(graph)).toEqual([]);
  });

  it('has no circle of imports', () => {
    expect(importCycles(graph)).toEqual([]);
  });

  it('names an upward import, a peer import and a circle', () => {
    const bad = new Map([
      ['config/load.ts', ['config/memory-fit.ts']],
      ['config/memory-fit.ts', ['config/load.ts', 'store/stream-log.ts']],
      ['store/stream-log.ts', ['model/event-model.ts']],
      ['model/event-model.ts', []],
      ['ingest/accept-batch.ts', ['delivery/lane.ts', 'store/stream-log.ts']],
    ]);
    expect(upwardImports(bad)).toEqual([
      'config/memory-fit.ts → store/stream-log.ts (store/ is above config/)',
      'ingest/accept-batch.ts → delivery/lane.ts (ingest/ and delivery/ are peers)',
    ]);
    expect(importCycles(bad)).toEqual(['config/load.ts → config/memory-fit.ts → config/load.ts']);
  });
});
