// Security releases reach a running site: when the packaged WordPress (WP_SOURCE,
// Debian's /usr/share/wordpress) is a newer version than the stack's copy, `make up`'s layout step
// copies the new core over (wp-admin and wp-includes whole: files a release dropped go too) and
// keeps wp-content and wp-config.php; the install step then upgrades the database (wp_upgrade()).
// A site is installed from a copy of WP_SOURCE with only MariaDB running (no web server needed),
// then that copy is "upgraded" as apt would: a bumped $wp_version and $wp_db_version, a new core
// file, and a changed file under its wp-content that must not reach the site.
// Run: bash -c 'source testkit/stack.sh; with_temp_stack core-refresh node --test tests/e2e/core-refresh.test.mjs'
// (scripts/suites/e2e.sh runs it).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT as repo } from '../../testkit/process.mjs';
import { givenStack } from '../../testkit/stack.mjs';

const SOURCE = process.env.WP_SOURCE || '/usr/share/wordpress';
const pkg = mkdtempSync(join(tmpdir(), 'core-refresh-pkg.'));
chmodSync(pkg, 0o755);   // the web user reads the copy
const { wpDir: wp, env, run } = givenStack({ WP_SOURCE: pkg, DEMO_POSTS: 2, timeoutMs: 300_000 });
const must = (script, ...args) => {
  const r = run(script, ...args);
  assert.equal(r.status, 0, `${script} ${args.join(' ')} failed:\n${r.out.slice(-2000)}`);
  return r.out;
};
const versionOf = (dir) => readFileSync(join(dir, 'wp-includes/version.php'), 'utf8').match(/\$wp_version = '([^']+)'/)[1];
const dbVersionOf = (dir) => Number(readFileSync(join(dir, 'wp-includes/version.php'), 'utf8').match(/\$wp_db_version = (\d+)/)[1]);

// The stack itself is stopped and removed by with_temp_stack (testkit/stack.sh).
after(() => {
  rmSync(pkg, { recursive: true, force: true });
});

test('a newer packaged core is copied in on the next make up, wp-content and wp-config.php kept, the database upgraded', () => {
  execFileSync(join(repo, 'stack/copy-wordpress.sh'), [SOURCE, pkg]);
  // What make up does before the web servers, with only the database.
  must('stack/gen-secrets.sh');
  must('stack/prepare-wordpress.sh', 'layout');
  must('stack/render-config.sh', 'wordpress');
  must('stack/services/mariadb.sh', 'start');
  must('stack/prepare-wordpress.sh', 'install');
  const old = versionOf(wp);
  const oldDb = dbVersionOf(wp);
  const sql = (q) => execFileSync(join(repo, 'stack/ctl.sh'), ['sql', q], { env, encoding: 'utf8' }).trim();
  assert.equal(Number(sql("SELECT option_value FROM wp_options WHERE option_name = 'db_version'")), oldDb);

  // The site's own things, which a refresh must keep.
  writeFileSync(join(wp, 'wp-content/uploads/site-upload.txt'), 'the site\'s upload\n');
  mkdirSync(join(wp, 'wp-content/plugins/site-plugin'), { recursive: true });
  writeFileSync(join(wp, 'wp-content/plugins/site-plugin/site-plugin.php'), '<?php // the site\'s plugin\n');
  const config = readFileSync(join(wp, 'wp-config.php'), 'utf8');
  // A file the running release has and the next one dropped.
  writeFileSync(join(wp, 'wp-includes/dropped-by-next-release.php'), '<?php\n');

  // The package upgraded, as apt would.
  const next = `${old}.99`;
  const vfile = join(pkg, 'wp-includes/version.php');
  writeFileSync(vfile, readFileSync(vfile, 'utf8').replace(/\$wp_version = '[^']+'/, `$wp_version = '${next}'`).replace(/\$wp_db_version = \d+/, `$wp_db_version = ${oldDb + 1}`));
  writeFileSync(join(pkg, 'wp-includes/new-in-next-release.php'), '<?php // new core file\n');
  writeFileSync(join(pkg, 'wp-content/package-only.txt'), 'the package\'s wp-content, not the site\'s\n');

  const out = must('stack/prepare-wordpress.sh', 'layout');
  assert.match(out, new RegExp(`refreshing core ${old.replace(/\./g, '\\.')} -> ${next.replace(/\./g, '\\.')}`), out);
  assert.equal(versionOf(wp), next, 'the copy is not the packaged version');
  assert.ok(existsSync(join(wp, 'wp-includes/new-in-next-release.php')), 'a file new in the release was not copied');
  assert.ok(!existsSync(join(wp, 'wp-includes/dropped-by-next-release.php')), 'a file the release dropped is still in wp-includes');
  assert.equal(readFileSync(join(wp, 'wp-content/uploads/site-upload.txt'), 'utf8'), 'the site\'s upload\n');
  assert.ok(existsSync(join(wp, 'wp-content/plugins/site-plugin/site-plugin.php')), 'the site\'s plugin is gone');
  assert.ok(!existsSync(join(wp, 'wp-content/package-only.txt')), 'the package\'s wp-content was copied into the site\'s');
  assert.equal(readFileSync(join(wp, 'wp-config.php'), 'utf8'), config, 'wp-config.php changed');

  const up = must('stack/prepare-wordpress.sh', 'install');
  assert.match(up, new RegExp(`database upgraded from db_version ${oldDb} to ${oldDb + 1}`), up);
  assert.equal(Number(sql("SELECT option_value FROM wp_options WHERE option_name = 'db_version'")), oldDb + 1);
  // Once current, nothing happens again.
  assert.doesNotMatch(must('stack/prepare-wordpress.sh', 'layout'), /refreshing core/);
  assert.doesNotMatch(must('stack/prepare-wordpress.sh', 'upgrade'), /database upgraded/);
});
