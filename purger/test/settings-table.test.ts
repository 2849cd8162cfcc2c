// The settings' docs agree with their one declaration (src/config/settings.ts): the README's
// table is its rendering, and stack/settings.table's purger rows name its settings with its
// defaults. scripts/settings-table.ts --write renders the README's table again.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Settings } from '../src/config/settings.js';
import { README, readmeProblems, renderTable, STACK_TABLE, stackTableProblems } from '../scripts/settings-table.js';

describe('the settings docs', () => {
  it('README.md shows every setting as src/config/settings.ts declares it', () => {
    expect(readmeProblems(readFileSync(README, 'utf8'))).toEqual([]);
    const table = renderTable();
    for (const name of Object.keys(Settings.properties)) expect(table).toContain(`| \`${name}\` |`);
  });

  it('fails when the README table differs from the schema', () => {
    const readme = readFileSync(README, 'utf8');
    const edited = readme.replace('| `PURGER_PORT` | `8090` |', '| `PURGER_PORT` | `8091` |');
    expect(edited).not.toBe(readme);
    expect(readmeProblems(edited)).toEqual([expect.stringContaining("the settings table is not src/config/settings.ts's rendering")]);
    expect(readmeProblems('no table')).toEqual([expect.stringContaining('has no <!-- settings:begin -->')]);
  });

  it("stack/settings.table's purger rows are settings of the schema, with its defaults", () => {
    const table = readFileSync(STACK_TABLE, 'utf8');
    expect(table).toMatch(/^PURGER_REPURGE_DELAYS_MS\s+setting\s+\S+\s+\S+\s+\S+\s+purger\s/m);
    expect(stackTableProblems(table)).toEqual([]);
  });

  it('names a purger row the schema lacks or whose default differs', () => {
    const rows = [
      'PURGER_REFRESH_CONCURRENCY setting 4 8 count purger pages each node re-fetches',
      'PURGER_REPURGE_DELAYS_MS setting "" 300 - purger when the purger repurges',
      'PURGER_NO_SUCH setting 1 1 - purger nothing',
      'PURGER_PORT setting 9000 9000 port - a stack setting of its own',
    ].join('\n');
    expect(stackTableProblems(rows)).toEqual([
      "stack/settings.table: PURGER_REFRESH_CONCURRENCY's COMPOSE default is 8, the purger's is 4 (src/config/settings.ts)",
      "stack/settings.table: PURGER_REPURGE_DELAYS_MS's COMPOSE default is 300, the purger's is \"\" (src/config/settings.ts)",
      'stack/settings.table: PURGER_NO_SUCH is marked purger, but src/config/settings.ts declares no such setting',
    ]);
  });
});
