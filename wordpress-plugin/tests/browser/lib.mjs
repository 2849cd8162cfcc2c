// The browser tests' one kit: Debian's Chromium driven by playwright-core, a wp-admin login, and a
// watcher that records everything a person would call broken on a page: console errors, uncaught
// exceptions, failed requests and any 4xx/5xx answer.
import { chromium } from 'playwright-core';

// CHROMIUM_RESOLVE=HOST:ADDR (tests/compose/own-site-test.sh): HOST resolves to ADDR, as a reader's
// DNS would send them to the edge, and the edge's self-signed certificate is accepted.
export async function launch() {
  const resolve = process.env.CHROMIUM_RESOLVE?.match(/^([a-z0-9.-]+):([0-9.]+)$/);
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--no-first-run',
      ...(resolve ? [`--host-resolver-rules=MAP ${resolve[1]} ${resolve[2]}`, '--ignore-certificate-errors'] : [])],
    timeout: 120000,
  });
}

/**
 * A page with a 90 s default timeout whose problems are pushed to `problems` as strings. With
 * `site` (the site's base URL), requests to any other origin (Gravatar in the admin bar, say)
 * are answered 204 in the browser and listed in `offsite`: the tests run without internet, and a
 * page must not depend on one.
 */
export async function watchedPage(browser, problems, { ignore = [], site = null, offsite = [] } = {}) {
  const page = await browser.newPage();
  page.setDefaultTimeout(90000);
  // A navigation the machine dropped (ERR_NETWORK_CHANGED, below) is made again, up to three
  // times: page.goto only GETs, so the page is the same.
  const goto = page.goto.bind(page);
  page.goto = async (url, options) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await goto(url, options);
      } catch (e) {
        if (attempt >= 3 || !String(e?.message).includes('net::ERR_NETWORK_CHANGED')) throw e;
      }
    }
  };
  if (site) {
    const origin = new URL(site).origin;
    await page.route((url) => url.origin !== origin, (route) => {
      offsite.push(route.request().url());
      return route.fulfill({ status: 204, body: '' });
    });
  }
  // Docker adding or removing a network on this machine (another stack starting) makes Chromium
  // drop requests in flight with ERR_NETWORK_CHANGED: the machine's doing, not the page's.
  const ignored = (text) => text.includes('net::ERR_NETWORK_CHANGED') || ignore.some((re) => re.test(text));
  const add = (text) => { if (!ignored(text)) problems.push(`${text} (on ${page.url()})`); };
  page.on('console', (msg) => { if (msg.type() === 'error') add(`console error: ${msg.text()}`); });
  page.on('pageerror', (err) => add(`uncaught: ${err.message}`));
  page.on('requestfailed', (req) => {
    const why = req.failure()?.errorText ?? 'failed';
    // A navigation that replaces the page aborts what the old page still loads: not a fault.
    if (why !== 'net::ERR_ABORTED') add(`request failed: ${req.method()} ${req.url()} ${why}`);
  });
  page.on('response', (res) => { if (res.status() >= 400) add(`HTTP ${res.status()}: ${res.request().method()} ${res.url()}`); });
  return page;
}

/**
 * Logs in through wp-login.php. Done once wp-admin's answer arrives: the dashboard's own
 * sub-resources are not waited for (every caller goes on to the page it tests). A refused login
 * throws with WordPress's message; a login POST the machine dropped (ERR_NETWORK_CHANGED: Docker
 * adding a network on the host mid-request) is sent again, up to three times, and any other failed
 * POST throws at once with Chromium's reason instead of waiting out the page's timeout.
 */
export async function login(page, base, user, pass) {
  const dropped = [];
  for (let attempt = 1; ; attempt++) {
    await page.goto(`${base}/wp-login.php`);
    await page.fill('#user_login', user);
    await page.fill('#user_pass', pass);
    // A failed navigation ends the wait at once, with Chromium's error code in its message.
    const outcome = page.waitForURL(/\/wp-admin\//, { waitUntil: 'commit' })
      .then(() => ({ landed: true }), (e) => ({ failed: /net::ERR_[A-Z_]+/.exec(e.message)?.[0] ?? null }));
    await page.click('#wp-submit', { noWaitAfter: true });
    const { landed, failed } = await outcome;
    if (landed) return;
    if (failed === 'net::ERR_NETWORK_CHANGED' && attempt < 3) {
      dropped.push(failed);
      // Chromium shows its error page next; going back to the form before it does is interrupted.
      await page.waitForURL((url) => url.protocol === 'chrome-error:', { timeout: 5000 }).catch(() => {});
      continue;
    }
    const why = failed ? `the login POST failed: ${failed}`
      : await page.locator('#login_error').textContent({ timeout: 1000 }).then((t) => t.trim(), () => null);
    const retried = dropped.length ? ` (after ${dropped.length} dropped: ${dropped.join(', ')})` : '';
    throw new Error(`login as ${user} did not reach wp-admin (still on ${page.url()})${why ? `: ${why}` : ''}${retried}`);
  }
}

/** Runs `steps(result)` and prints one JSON line; exit status 1 on an error or any problem. */
export async function run(steps) {
  const result = { steps: [], problems: [] };
  const browser = await launch();
  try {
    await steps(browser, result);
  } catch (err) {
    result.error = String(err?.stack || err);
  } finally {
    await browser.close();
  }
  console.log(JSON.stringify(result));
  process.exit(result.error || result.problems.length ? 1 : 0);
}
