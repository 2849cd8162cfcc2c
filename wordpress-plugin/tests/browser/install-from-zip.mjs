// A site owner installs the plugin from its zip into a WordPress that never had it: Plugins → Add
// New → Upload Plugin → Install Now → Activate, then the settings page (purger URL, secret,
// namespace; Test connection), Site Health's status (ours and core's page-cache check) and info
// tabs, and a Quick Edit of a post.
// Env: WP_URL, WP_USER, WP_PASS, ZIP, PURGER_URL, SECRET, NAMESPACE, POST_ID, NEW_TITLE.
// Prints one JSON line with what it saw (lib.mjs's run); any problem on a page fails it.
import { login, run, watchedPage } from './lib.mjs';

const env = process.env;
const base = env.WP_URL;
const plugin = 'varnish-edge/varnish-edge.php';
const text = async (page, selector) => (await page.locator(selector).first().textContent()).replace(/\s+/g, ' ').trim();

await run(async (browser, result) => {
  // No internet here: requests to other origins are answered 204 in the browser and listed in
  // result.offsite (lib.mjs); DistInstallTest allows only WordPress's own Gravatar images there.
  result.offsite = [];
  const page = await watchedPage(browser, result.problems, { site: base, offsite: result.offsite });
  await login(page, base, env.WP_USER, env.WP_PASS);
  result.steps.push('logged in');

  // Plugins → Add New → Upload Plugin: the real form, #pluginzip and "Install Now".
  await page.goto(`${base}/wp-admin/plugins.php`);
  result.listed_before = await page.locator(`tr[data-plugin="${plugin}"]`).count();
  await Promise.all([page.waitForURL(/plugin-install\.php/), page.click('.wrap a.page-title-action')]);
  await page.click('.upload-view-toggle');
  await page.locator('#pluginzip').waitFor({ state: 'visible' });
  await page.setInputFiles('#pluginzip', env.ZIP);
  await Promise.all([page.waitForURL(/update\.php\?action=upload-plugin/), page.click('#install-plugin-submit')]);
  result.install_page = await text(page, '.wrap');
  if (!result.install_page.includes('Plugin installed successfully.')) throw new Error(`upload failed: ${result.install_page}`);
  result.steps.push('uploaded');

  const activate = page.locator(`.wrap a[href*="action=activate"][href*="${encodeURIComponent(plugin)}"]`);
  await Promise.all([page.waitForURL(/plugins\.php/), activate.click()]);
  result.activated_notice = await text(page, '#message');
  if (!result.activated_notice.includes('Plugin activated.')) throw new Error(`activation failed: ${result.activated_notice}`);
  result.row_class = await page.locator(`tr[data-plugin="${plugin}"]`).first().getAttribute('class');
  result.row_text = await text(page, `tr[data-plugin="${plugin}"]`);
  result.steps.push('activated');

  // Settings → Varnish Edge: in the Settings menu, and reached through the plugin row's link.
  result.menu_entries = await page.locator('#adminmenu a[href="options-general.php?page=varnish-edge"]').count();
  await Promise.all([
    page.waitForURL(/options-general\.php\?page=varnish-edge/),
    page.click(`tr[data-plugin="${plugin}"] a[href*="page=varnish-edge"]`),
  ]);
  result.settings_heading = await text(page, '.wrap h1');
  await page.fill('#varnish-edge-purger_url', env.PURGER_URL);
  await page.fill('#varnish-edge-secret', env.SECRET);
  await page.fill('#varnish-edge-namespace', env.NAMESPACE);
  await Promise.all([page.waitForLoadState('load'), page.click('#varnish-edge-settings #submit')]);
  await page.waitForSelector('#setting-error-settings_updated');
  result.purger_url_after_save = await page.inputValue('#varnish-edge-purger_url');
  result.namespace_after_save = await page.inputValue('#varnish-edge-namespace');
  // The secret is never shown back: an empty field, and a line saying it is set.
  result.secret_field_after_save = await page.inputValue('#varnish-edge-secret');
  result.secret_state = await text(page, '#varnish-edge-secret-state');
  result.secret_in_page = (await page.content()).includes(env.SECRET);
  result.steps.push('configured');

  await Promise.all([page.waitForURL(/page=varnish-edge/), page.click('#varnish-edge-test')]);
  result.test_notice = await text(page, '.varnish-edge-notice');
  result.steps.push('connection tested');

  // Site Health: every test, the asynchronous ones included, has reported.
  await page.goto(`${base}/wp-admin/site-health.php`);
  await page.waitForSelector('.site-health-progress-wrapper:not(.loading)');
  await page.waitForLoadState('networkidle');
  const ours = page.locator('.health-check-accordion-trigger', { hasText: 'Cache purges reach the purger' });
  result.health_result_in = await ours.first().evaluate((el) => el.closest('[id^="health-check-issues-"]')?.id ?? '');
  result.health_result = await ours.first().evaluate((el) => el.textContent.replace(/\s+/g, ' ').trim());
  result.health_detail = await page
    .locator('#health-check-accordion-block-varnish_edge')
    .evaluate((el) => el.textContent.replace(/\s+/g, ' ').trim());
  // Core's own "Page cache" check (WordPress 6.1+): where it landed and what it says.
  const pageCache = page.locator('.health-check-accordion-trigger', { hasText: /page cache/i });
  result.page_cache = (await pageCache.count()) === 0 ? null : {
    in: await pageCache.first().evaluate((el) => el.closest('[id^="health-check-issues-"]')?.id ?? ''),
    text: await pageCache.first().evaluate((el) => el.textContent.replace(/\s+/g, ' ').trim()),
  };
  result.steps.push('site health');

  // Site Health → Info: the sections render, the directory sizes arrive, the plugin is listed active.
  await page.goto(`${base}/wp-admin/site-health.php?tab=debug`);
  await page.waitForLoadState('networkidle');
  // WordPress hides the sizes' spinner once /wp-site-health/v1/directory-sizes has answered.
  await page.waitForFunction(() => {
    const spinner = document.querySelector('.health-check-wp-paths-sizes.spinner');
    return spinner && getComputedStyle(spinner).visibility === 'hidden';
  });
  result.info_sections = await page.locator('.health-check-accordion-trigger').count();
  result.info_active_plugins = await page
    .locator('#health-check-accordion-block-wp-plugins-active')
    .evaluate((el) => el.textContent.replace(/\s+/g, ' ').trim());
  result.info_total_size = await page
    .locator('#health-check-accordion-block-wp-paths-sizes tr', { hasText: 'Total installation size' })
    .first()
    .evaluate((el) => el.textContent.replace(/\s+/g, ' ').trim());
  result.steps.push('site health info');

  // An editor's change: Quick Edit of a post's title in Posts → All Posts.
  await page.goto(`${base}/wp-admin/edit.php`);
  const row = page.locator(`#post-${env.POST_ID}`);
  await row.hover();
  await row.locator('button.editinline').click();
  const form = page.locator(`#edit-${env.POST_ID}`);
  await form.locator('input[name="post_title"]').fill(env.NEW_TITLE);
  await form.locator('button.save').click();
  await page.locator(`#post-${env.POST_ID} .row-title`, { hasText: env.NEW_TITLE }).waitFor();
  result.steps.push('post updated');
});
