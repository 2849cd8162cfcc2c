// Headless Chromium (Debian's) driven by playwright-core: log in, save the Varnish Edge settings,
// test the connection, and click "Purge whole site" in the admin bar.
// Env: WP_URL, WP_USER, WP_PASS, NEW_TTL. Prints one JSON line with what it saw.
import { chromium } from 'playwright-core';

const base = process.env.WP_URL;
const result = { steps: [] };
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--no-first-run'],
  timeout: 120000,
});
try {
  const page = await browser.newPage();
  page.setDefaultTimeout(90000);

  await page.goto(`${base}/wp-login.php`);
  await page.fill('#user_login', process.env.WP_USER);
  await page.fill('#user_pass', process.env.WP_PASS);
  await Promise.all([page.waitForURL(/\/wp-admin\//), page.click('#wp-submit')]);
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
} catch (err) {
  result.error = String(err?.stack || err);
} finally {
  await browser.close();
}
console.log(JSON.stringify(result));
process.exit(result.error ? 1 : 0);
