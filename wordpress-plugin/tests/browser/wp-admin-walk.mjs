// A newcomer's walk through wp-admin, in Debian's Chromium: log in, open Media → Library, upload
// a JPEG and a WAV through Media → Add New, open the block editor and insert the JPEG into an
// Image block through the media modal. Any console error, uncaught exception, failed request or
// 4xx/5xx answer from the site fails the walk (lib.mjs's watcher); so does an upload WordPress
// could not read (no image sizes for the JPEG, no audio metadata from getID3 for the WAV).
// Env: WP_URL (the site as visitors reach it), WP_USER, WP_PASS. Prints one JSON line.
import { login, run, watchedPage } from './lib.mjs';

const base = process.env.WP_URL.replace(/\/$/, '');
const stamp = `walk-${Date.now()}`;

/** One second of 8 kHz mono 16-bit silence with a tone: a valid RIFF/WAVE file. */
function wav() {
  const rate = 8000;
  const data = Buffer.alloc(rate * 2);
  for (let i = 0; i < rate; i++) data.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), i * 2);
  const head = Buffer.alloc(44);
  head.write('RIFF', 0);
  head.writeUInt32LE(36 + data.length, 4);
  head.write('WAVEfmt ', 8);
  head.writeUInt32LE(16, 16);
  head.writeUInt16LE(1, 20); // PCM
  head.writeUInt16LE(1, 22); // mono
  head.writeUInt32LE(rate, 24);
  head.writeUInt32LE(rate * 2, 28);
  head.writeUInt16LE(2, 32);
  head.writeUInt16LE(16, 34);
  head.write('data', 36);
  head.writeUInt32LE(data.length, 40);
  return Buffer.concat([head, data]);
}

/** A 1200×800 JPEG drawn by the browser itself: big enough for WordPress to make its sizes. */
async function jpeg(page) {
  const url = await page.evaluate(() => {
    const c = document.createElement('canvas');
    c.width = 1200;
    c.height = 800;
    const g = c.getContext('2d');
    const grad = g.createLinearGradient(0, 0, 1200, 800);
    grad.addColorStop(0, '#1d4ed8');
    grad.addColorStop(1, '#f59e0b');
    g.fillStyle = grad;
    g.fillRect(0, 0, 1200, 800);
    return c.toDataURL('image/jpeg', 0.85);
  });
  return Buffer.from(url.split(',')[1], 'base64');
}

await run(async (browser, result) => {
  result.offsite = [];
  const page = await watchedPage(browser, result.problems, { site: base, offsite: result.offsite });
  // A step is done when it worked and nothing on the way broke: stop at the first broken one.
  const done = (step) => {
    if (result.problems.length) throw new Error(`broken during "${step}"`);
    result.steps.push(step);
  };
  await login(page, base, process.env.WP_USER, process.env.WP_PASS);
  done('logged in');

  // The Media Library grid is a Backbone app on underscore: blank when either is missing.
  await page.goto(`${base}/wp-admin/upload.php?mode=grid`);
  await page.locator('.attachments-browser .media-toolbar').waitFor({ state: 'visible' });
  done('media library');

  await page.goto(`${base}/wp-admin/media-new.php`);
  await page.setInputFiles('#plupload-upload-ui input[type=file]', [
    { name: `${stamp}.jpg`, mimeType: 'image/jpeg', buffer: await jpeg(page) },
    { name: `${stamp}.wav`, mimeType: 'audio/wav', buffer: wav() },
  ]);
  // Each finished upload gets an "Edit" link; a failed one an error box instead.
  await page.waitForFunction(
    () => document.querySelectorAll('#media-items .media-item .edit-attachment, #media-items .error-div').length >= 2,
    null,
    { timeout: 120000 },
  );
  const errors = await page.locator('#media-items .error-div').allTextContents();
  if (errors.length) throw new Error(`upload failed: ${errors.join(' | ')}`);
  done('uploaded jpeg and wav');

  // The block editor: dismiss the welcome guide, add an Image block, pick the JPEG in the modal.
  await page.goto(`${base}/wp-admin/post-new.php`);
  await page.waitForFunction(() => window.wp?.data?.select('core/block-editor') && window.wp.blocks?.getBlockType('core/image'));
  // The welcome guide opens on a first visit, maybe after this point: switch it off where the
  // editor keeps it (the preferences store, WordPress 6.0 and later), which also closes it. Set
  // again until the guide is gone: the user's saved preferences, loaded a moment later on a busy
  // machine, can turn it back on.
  await page.waitForFunction(() => {
    window.wp.data.dispatch('core/preferences').set('core/edit-post', 'welcomeGuide', false);
    return !document.querySelector('.components-guide');
  }, null, { polling: 500 });
  const clientId = await page.evaluate(() => {
    const block = window.wp.blocks.createBlock('core/image');
    window.wp.data.dispatch('core/block-editor').insertBlocks(block);
    return block.clientId;
  });
  // The canvas is an iframe on newer WordPress (block themes), the page itself on older ones.
  const iframe = page.locator('iframe[name="editor-canvas"]');
  const canvas = (await iframe.count()) ? page.frameLocator('iframe[name="editor-canvas"]') : page;
  await canvas.locator(`[data-block="${clientId}"]`).getByRole('button', { name: 'Media Library' }).click();
  const modal = page.locator('.media-modal:visible');
  await modal.locator(`.attachments .attachment[aria-label="${stamp}"]`).click();
  await modal.locator('.media-button-select').click();
  await page.waitForFunction((id) => window.wp.data.select('core/block-editor').getBlock(id)?.attributes.url, clientId);
  result.image_url = await page.evaluate((id) => window.wp.data.select('core/block-editor').getBlock(id).attributes.url, clientId);
  if (!result.image_url.includes(stamp)) throw new Error(`the Image block shows ${result.image_url}, not ${stamp}.jpg`);
  done('inserted image in block editor');

  // What WordPress made of the uploads: the JPEG's sizes, the WAV's metadata (getID3).
  const media = await page.evaluate(
    (s) => window.wp.apiFetch({ path: `/wp/v2/media?search=${s}&context=edit&_fields=source_url,mime_type,media_details` }),
    stamp,
  );
  const jpg = media.find((m) => m.mime_type === 'image/jpeg');
  const audio = media.find((m) => m.mime_type.startsWith('audio/'));
  result.jpeg_sizes = Object.keys(jpg?.media_details?.sizes ?? {}).sort();
  result.wav = { dataformat: audio?.media_details?.dataformat ?? null, length: audio?.media_details?.length ?? null };
  if (!result.jpeg_sizes.includes('thumbnail')) throw new Error(`the JPEG has no thumbnail size: ${JSON.stringify(jpg)}`);
  if (result.wav.dataformat !== 'wav') throw new Error(`getID3 read no metadata from the WAV: ${JSON.stringify(audio)}`);
  done('media metadata read');
});
