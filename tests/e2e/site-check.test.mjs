// `make up` must not call a broken site ready (stack/check-site.sh). One native stack on free
// loopback ports whose WordPress tree is a copy of WP_SOURCE (default Debian's
// /usr/share/wordpress) without that version's default theme (WP_DEFAULT_THEME:
// twentytwentythree on 6.1, twentytwentyfive on 6.7+), as on a machine that never installed
// wordpress-theme-<theme>; then the theme is installed and `make up` runs again; then the same
// stack with a PHP fatal error and with its database stopped.
// Run: bash -c 'source testkit/stack.sh; with_temp_stack site-check node --test tests/e2e/site-check.test.mjs'
// (scripts/suites/e2e.sh runs it);
// WP_SOURCE=$(scripts/fetch-wordpress.sh sid) for Debian sid's WordPress (7.1 or later), or
// scripts/fetch-wordpress.sh VERSION for another.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT as repo } from '../../testkit/process.mjs';
import { givenStack } from '../../testkit/stack.mjs';
import { until } from '../../testkit/wait.mjs';

const SOURCE = process.env.WP_SOURCE || '/usr/share/wordpress';
// The theme a fresh install of that WordPress activates (stack/wp/install.php).
const THEME = readFileSync(join(SOURCE, 'wp-includes/default-constants.php'), 'utf8')
  .match(/define\(\s*'WP_DEFAULT_THEME',\s*'([\w-]+)'/)?.[1];
if (!THEME) throw new Error(`no WP_DEFAULT_THEME in ${SOURCE}/wp-includes/default-constants.php`);
const wpSource = mkdtempSync(join(tmpdir(), 'site-check-wp.'));
chmodSync(wpSource, 0o755);   // the copy keeps the source's mode; the web server must read it
const { wpDir, env, run } = givenStack({ WP_SOURCE: wpSource, DEMO_POSTS: 5, timeoutMs: 240_000 });

// The stack itself is stopped and removed by with_temp_stack (testkit/stack.sh).
after(() => {
  rmSync(wpSource, { recursive: true, force: true });
});

/** The home page through this stack's Varnish (which may still be starting on a busy machine). */
async function edgeHome() {
  const r = await until('Varnish to answer the home page', () =>
    fetch(`http://127.0.0.1:${env.VARNISH_PORT}/`, { headers: { host: env.SITE_HOST } }).catch(() => undefined), 60_000, 250);
  return { cache: r.headers.get('x-cache'), body: await r.text() };
}

test('make up fails and names the cause when the theme is not installed', async () => {
  execFileSync(join(repo, 'stack/copy-wordpress.sh'), [SOURCE, wpSource]);
  rmSync(join(wpSource, 'wp-content/themes', THEME), { recursive: true, force: true });
  const r = run('stack/up.sh');
  assert.notEqual(r.status, 0, `make up succeeded without a theme:\n${r.out.slice(-2000)}`);
  assert.match(r.out, new RegExp(`the site does not render: no theme: the active theme '${THEME}' is not installed`));
  assert.match(r.out, new RegExp(`apt-get install wordpress-theme-${THEME} `));
  assert.doesNotMatch(r.out, /Site \(through Varnish\)/, 'make up printed the ready banner');
  // What a user saw before the check existed: an empty 200, cached.
  await edgeHome();
  const home = await edgeHome();
  assert.equal(home.body.length, 0);
  assert.equal(home.cache, 'HIT');
});

test('make up again once the theme is installed: ready, and the empty page Varnish cached is gone', async () => {
  cpSync(join(SOURCE, 'wp-content/themes', THEME), join(wpSource, 'wp-content/themes', THEME), { recursive: true });
  assert.equal((await edgeHome()).body.length, 0, 'Varnish should still hold the empty home page from before the fix');
  const r = run('stack/up.sh');
  assert.equal(r.status, 0, r.out.slice(-2000));
  assert.match(r.out, new RegExp(`wordpress: adding theme ${THEME}\n`));
  assert.match(r.out, new RegExp(`site renders: theme ${THEME}, \\d+ posts, home page from the origin and through Varnish`));
  assert.match(r.out, /Site \(through Varnish\)/);
  assert.ok((await edgeHome()).body.includes('wp-site-blocks'));
});

test('the check names a PHP fatal error', () => {
  const broken = join(wpDir, 'wp-content/mu-plugins/site-check-fatal.php');
  writeFileSync(broken, "<?php\nsite_check_undefined_function();\n");
  try {
    const r = run('stack/check-site.sh');
    assert.notEqual(r.status, 0);
    assert.match(r.out, /the site does not render: PHP error/);
    assert.match(r.out, /site_check_undefined_function/);
  } finally {
    rmSync(broken, { force: true });
  }
});

test('the check names the database when MariaDB is down', () => {
  assert.equal(run('stack/services/mariadb.sh', 'stop').status, 0);
  const r = run('stack/check-site.sh');
  assert.notEqual(r.status, 0);
  assert.match(r.out, /the site does not render: database: WordPress cannot connect to MariaDB/);
});
