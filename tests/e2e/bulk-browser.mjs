// The Posts screen's Move to Trash as an editor does it, in headless Chromium (the browser tests'
// kit: wordpress-plugin/tests/browser/lib.mjs, playwright-core and Debian's chromium): log in,
// open Posts, filter by the posts' category, tick each post's box, Bulk actions → Move to Trash, Apply. Used by
// bulk-actions.test.mjs; its ticked rows must be exactly the posts the test warmed.
import { mkdirSync } from 'node:fs';
import { launch, login, watchedPage } from '../../wordpress-plugin/tests/browser/lib.mjs';

/**
 * trashFromPostsScreen({ base, user, pass, category, ids, token, shots }) -> { respondedAt, notice, shot }
 * base: the site through Varnish; ids: the posts the first rows of Posts filtered by category
 * (a term id) must show, in order;
 * token: sent as X-Bulk-E2E on the bulk action's own request (tests/e2e/bulk-probe.php);
 * respondedAt: performance.now() when WordPress answered the action (its redirect).
 */
export async function trashFromPostsScreen({ base, user, pass, category, ids, token, shots }) {
  const browser = await launch();
  const problems = [];
  try {
    const page = await watchedPage(browser, problems, { site: base });
    await page.setViewportSize({ width: 1280, height: 900 });
    await login(page, base, user, pass);
    await page.goto(`${base}/wp-admin/edit.php`);
    await page.selectOption('#cat', String(category));
    await Promise.all([page.waitForURL(/[?&]cat=/), page.click('#post-query-submit')]);
    const rows = await page.locator('#the-list tr[id^="post-"]').evaluateAll((trs) => trs.map((tr) => Number(tr.id.slice(5))));
    const shown = rows.slice(0, ids.length);
    if (shown.join() !== ids.join()) {
      throw new Error(`the Posts screen's first ${ids.length} rows are ${shown.join(',')}, want the imported ${ids.join(',')}`);
    }
    for (const id of ids) await page.locator(`#cb-select-${id}`).check();
    await page.selectOption('#bulk-action-selector-top', 'trash');
    mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: `${shots}/bulk-trash-20-selected.png`, fullPage: true });
    // Mark the bulk action's request for the probe (Chromium repeats the header on the redirect
    // that follows; the probe tells the two apart).
    await page.route((url) => url.pathname.endsWith('/wp-admin/edit.php') && url.searchParams.get('action') === 'trash',
      (route) => route.continue({ headers: { ...route.request().headers(), 'x-bulk-e2e': token } }));
    const answered = page.waitForResponse((r) => new URL(r.url()).searchParams.get('action') === 'trash');
    await page.click('#doaction');
    const response = await answered;
    const respondedAt = performance.now();
    if (response.status() !== 302) throw new Error(`Move to Trash answered ${response.status()}, want a 302 back to Posts`);
    await page.waitForURL(/[?&]trashed=/);
    const notice = (await page.locator('#message').textContent()).trim().replace(/\s+/g, ' ');
    if (!notice.startsWith(`${ids.length} posts moved to the Trash.`)) throw new Error(`the Posts screen says "${notice}" after Apply`);
    const shot = `${shots}/bulk-trash-20.png`;
    await page.screenshot({ path: shot, clip: { x: 0, y: 0, width: 1280, height: 900 } });
    if (problems.length) throw new Error(`the Posts screen reported problems: ${problems.slice(0, 5).join('; ')}`);
    return { respondedAt, notice, shot };
  } finally {
    await browser.close();
  }
}
