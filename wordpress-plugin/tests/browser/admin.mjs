// Log in, save the Varnish Edge settings, test the connection, and click "Purge whole site" in the
// admin bar. Env: WP_URL, WP_USER, WP_PASS, NEW_TTL. Prints one JSON line with what it saw.
import { login, run, watchedPage } from './lib.mjs';

const base = process.env.WP_URL;
await run(async (browser, result) => {
  const page = await watchedPage(browser, result.problems, { site: base });
  await login(page, base, process.env.WP_USER, process.env.WP_PASS);
  result.steps.push('logged in');

  await page.goto(`${base}/wp-admin/options-general.php?page=varnish-edge`);
  await page.fill('#varnish-edge-ttl', process.env.NEW_TTL);
  await Promise.all([page.waitForLoadState('load'), page.click('#varnish-edge-settings #submit')]);
  await page.waitForSelector('#setting-error-settings_updated');
  result.ttl_after_save = await page.inputValue('#varnish-edge-ttl');
  result.steps.push('settings saved');

  await Promise.all([page.waitForURL(/page=varnish-edge/), page.click('#varnish-edge-test')]);
  result.test_notice = (await page.textContent('.varnish-edge-notice')).trim();
  result.steps.push('connection tested');

  await page.goto(`${base}/`);
  await page.hover('#wp-admin-bar-varnish-edge');
  const link = page.locator('#wp-admin-bar-varnish-edge-purge-all a');
  await link.waitFor({ state: 'visible' });
  await Promise.all([page.waitForLoadState('load'), link.click()]);
  result.after_purge_url = page.url();
  result.steps.push('purged whole site');
});
