// The block editor's live notice, in Chromium: edit the newest post's title, click Update, and the
// editor must say, without a reload, "Live on 1 of 1 edge node in N ms" once the edge applied the
// save. Then the node-down case: with Varnish stopped, another edit must bring a warning naming
// the node and saying it is down and retried, and starting Varnish again must turn it into live
// (the purger retries). The notice is the plugin's, id "varnish-edge-live" in core/notices.
// While Varnish is down the browser reaches WordPress straight at the origin (as an editor would
// through another edge node): the site itself is only served through that one node.
// Env: WP_URL (the site, through Varnish), WP_ORIGIN (nginx), WP_USER, WP_PASS, STACK_CTL
// (stops and starts Varnish), EDGE_NODE (the purger's name of the node), SHOTS (directory for
// editor-live.png and editor-live-down.png). Prints one JSON line.
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { promisify } from 'node:util';
import { login, run, watchedPage } from './lib.mjs';

const base = process.env.WP_URL.replace(/\/$/, '');
const origin = process.env.WP_ORIGIN.replace(/\/$/, '');
const node = process.env.EDGE_NODE;
const shots = process.env.SHOTS;
const ctl = (...args) => promisify(execFile)(process.env.STACK_CTL, args, { timeout: 120000 });
const NOTICE = 'varnish-edge-live';
const LIVE = /^Live on 1 of 1 edge nodes? in (\d+) ms/;
const stamp = () => new Date().toISOString().slice(11, 19);

/** The live notice as the editor holds it (core/notices) and shows it (its visible text). */
function readNotice(page) {
  return page.evaluate((id) => {
    const n = window.wp.data.select('core/notices').getNotices().find((x) => x.id === id);
    if (!n) return null;
    const shown = [...document.querySelectorAll('.components-notice, .components-snackbar')]
      .find((el) => el.offsetParent !== null && el.textContent.includes(n.content));
    const link = shown?.querySelector('a[href]');
    return {
      status: n.status,
      type: n.type,
      text: n.content,
      shown: Boolean(shown),
      action: link ? { label: link.textContent.trim(), href: link.getAttribute('href') } : null,
    };
  }, NOTICE);
}

/** Waits until the live notice is shown and `ok(notice)`; fails naming the last notice seen. */
async function waitForNotice(page, what, ok, timeoutMs) {
  const end = Date.now() + timeoutMs;
  let last = null;
  while (Date.now() < end) {
    last = await readNotice(page);
    if (last?.shown && ok(last)) return last;
    await page.waitForTimeout(100);
  }
  throw new Error(`waited ${timeoutMs / 1000} s for the live notice to be ${what}; last seen: ${JSON.stringify(last)}`);
}

/** Types a new title the way a person does and clicks Update; resolves when the save is done. */
async function editAndUpdate(page, title) {
  const frame = (await page.locator('iframe[name="editor-canvas"]').count()) ? page.frameLocator('iframe[name="editor-canvas"]') : page;
  const field = frame.locator('.editor-post-title__input');
  await field.click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.type(title);
  await page.locator('.editor-post-publish-button').click();
  await page.waitForFunction((t) => {
    const ed = window.wp.data.select('core/editor');
    return !ed.isSavingPost() && !ed.isEditedPostDirty() && ed.didPostSaveRequestSucceed() && ed.getCurrentPost().title === t;
  }, title);
  return Date.now();
}

/** The notice's "in N ms" figure, checked to be a plausible number (at most `maxMs`). */
function liveMs(notice, maxMs) {
  const ms = Number(LIVE.exec(notice.text)?.[1]);
  if (!(ms >= 0 && ms <= maxMs)) throw new Error(`the live notice gives no time in ms: "${notice.text}"`);
  return ms;
}

/** The top of the editor (its toolbar, the notice, the title) to `name` under SHOTS. */
async function screenshot(page, notice, name) {
  const box = await page.locator('.components-notice, .components-snackbar').filter({ hasText: notice.text }).first().boundingBox();
  const height = Math.min(800, Math.ceil(box.y + box.height + 200));
  await page.screenshot({ path: `${shots}/${name}`, clip: { x: 0, y: 0, width: 1280, height } });
}

/** The action link must lead to the plugin's status panel. */
function checkAction(notice) {
  if (!notice.action || !/options-general\.php\?page=varnish-edge/.test(notice.action.href)) {
    throw new Error(`the notice has no link to the status panel: ${JSON.stringify(notice)}`);
  }
}

await run(async (browser, result) => {
  await mkdir(shots, { recursive: true });
  const page = await watchedPage(browser, result.problems, { site: base });
  await page.setViewportSize({ width: 1280, height: 800 });
  const done = (step) => {
    if (result.problems.length) throw new Error(`broken during "${step}"`);
    result.steps.push(step);
  };
  await login(page, base, process.env.WP_USER, process.env.WP_PASS);
  done('logged in');

  const [post] = await (await page.request.get(`${base}/wp-json/wp/v2/posts?per_page=1&_fields=id,link`)).json();
  result.post = post.id;
  await page.goto(`${base}/wp-admin/post.php?post=${post.id}&action=edit`);
  await page.waitForFunction(() => window.wp?.data?.select('core/editor')?.getCurrentPostId());
  // The welcome guide: off where the editor keeps it (the preferences store), which closes it.
  await page.evaluate(() => window.wp.data.dispatch('core/preferences').set('core/edit-post', 'welcomeGuide', false));
  await page.locator('.components-guide').waitFor({ state: 'hidden' });
  done('opened the newest post in the block editor');

  try {
    await liveAndDown(page, result, done);
  } catch (err) {
    await page.screenshot({ path: `${shots}/editor-live-failed.png` }).catch(() => {});
    throw err;
  } finally {
    // The suite goes on with this stack: never leave it without its edge.
    if (result.varnish_stopped) {
      await ctl('start', 'varnish');
      result.varnish_stopped = false;
    }
  }
});

async function liveAndDown(page, result, done) {
  const saved = await editAndUpdate(page, `Opening hours, updated at ${stamp()}`);
  done('updated the title');
  const live = await waitForNotice(page, '"Live on 1 of 1 edge node in N ms"', (n) => LIVE.test(n.text), 30000);
  result.live = { ...live, ms: liveMs(live, 30000), seen_after_ms: Date.now() - saved };
  if (live.status !== 'success') throw new Error(`the live notice is a ${live.status} notice, not success`);
  checkAction(live);
  await screenshot(page, live, 'editor-live.png');
  done('live notice');

  // The node down: the browser goes straight to the origin, Host kept, until Varnish is back.
  const site = new URL(base);
  const toOrigin = async (route) => {
    const url = new URL(route.request().url());
    const response = await route.fetch({ url: origin + url.pathname + url.search, headers: { ...route.request().headers(), host: site.host } });
    await route.fulfill({ response });
  };
  await page.route((url) => url.origin === site.origin, toOrigin);
  await ctl('stop', 'varnish');
  result.varnish_stopped = true;
  done('stopped varnish');
  await editAndUpdate(page, `Opening hours, updated again at ${stamp()}`);
  done('updated the title with the node down');
  // A warning naming the node and why (before the purger tried it, maybe just "pending").
  const down = await waitForNotice(page, `a warning naming ${node} as down or retrying`,
    (n) => n.status === 'warning' && n.text.includes(node) && /down|retrying/i.test(n.text), 60000);
  result.down = down;
  checkAction(down);
  await screenshot(page, down, 'editor-live-down.png');
  done('node-down warning');

  await ctl('start', 'varnish');
  result.varnish_stopped = false;
  const started = Date.now();
  const back = await waitForNotice(page, 'live again after Varnish started', (n) => LIVE.test(n.text) && n.status === 'success', 90000);
  result.back = { ...back, ms: liveMs(back, 300000), seen_after_start_ms: Date.now() - started };
  await page.unroute((url) => url.origin === site.origin, toOrigin);
  done('live again after varnish started');
}
