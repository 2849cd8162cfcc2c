/**
 * Varnish Edge: after each save of the post in the block editor (autosaves excepted), asks the
 * plugin's live-status route how far the change got and shows the answer as the notice
 * "varnish-edge-live": success once it is live on every edge node, a warning naming the node
 * that has not applied it (by name for those who may purge, as a count for the others). Asks
 * every 250 ms for 10 s, then every 2 s for 2 minutes while a node is still retrying; when the
 * answer says the purger cannot be reached (retryAfter, in seconds: the site remembers the failure
 * that long and does not ask the purger again meanwhile), it waits that long before asking again.
 * The "Edge status" link only when the answer or the page gives the status panel's URL. No build
 * step: wp.data, wp.apiFetch, wp.i18n and wp.url only.
 */
((wp, config) => {
	if (!wp || !config) {
		return;
	}
	const { __ } = wp.i18n;
	const NOTICE = 'varnish-edge-live';
	const FAST_MS = 250;
	const FAST_FOR_MS = 10000;
	const SLOW_MS = 2000;
	const GIVE_UP_MS = 120000;
	let run = 0;
	let saving = false;
	let autosaving = false;

	const notices = () => wp.data.dispatch('core/notices');

	const show = (status) => {
		if (status.state === 'none') {
			notices().removeNotice(NOTICE);
			return;
		}
		const kinds = { live: 'success', pending: 'info' };
		const url = status.statusUrl ?? config.statusUrl;
		notices().createNotice(kinds[status.state] || 'warning', status.message, {
			id: NOTICE,
			isDismissible: true,
			actions: url ? [{ label: __('Edge status', 'varnish-edge'), url }] : [],
		});
	};

	const poll = (postId, mine, started) => {
		if (mine !== run) {
			return;
		}
		wp.apiFetch({ path: wp.url.addQueryArgs(config.path, { post: postId }) }).then(
			(status) => {
				if (mine !== run) {
					return;
				}
				show(status);
				const elapsed = Date.now() - started;
				if (status.state === 'live' || status.state === 'none' || elapsed > GIVE_UP_MS) {
					return;
				}
				const next = elapsed < FAST_FOR_MS ? FAST_MS : SLOW_MS;
				const backOff = Number(status.retryAfter) > 0 ? Number(status.retryAfter) * 1000 : 0;
				setTimeout(() => poll(postId, mine, started), Math.max(next, backOff));
			},
			(error) => {
				if (mine === run) {
					show({ state: 'failed', message: error?.message || __('Could not read the edge status.', 'varnish-edge') });
				}
			},
		);
	};

	wp.data.subscribe(() => {
		const editor = wp.data.select('core/editor');
		if (!editor?.getCurrentPostId) {
			return;
		}
		const now = editor.isSavingPost();
		if (now && !saving) {
			autosaving = editor.isAutosavingPost();
		}
		if (saving && !now && !autosaving && editor.didPostSaveRequestSucceed()) {
			run += 1;
			poll(editor.getCurrentPostId(), run, Date.now());
		}
		saving = now;
	});
})(window.wp, window.varnishEdgeLive);
