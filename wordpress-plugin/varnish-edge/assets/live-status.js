/**
 * Varnish Edge: after each save of the post in the block editor (autosaves excepted), asks the
 * plugin's live-status route how far the change got and shows the answer as the notice
 * "varnish-edge-live": success once it is live on every edge node, a warning naming the node
 * that has not applied it. Asks every 250 ms for 10 s, then every 2 s for 2 minutes while a node
 * is still retrying. No build step: wp.data, wp.apiFetch, wp.i18n and wp.url only.
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
		notices().createNotice(kinds[status.state] || 'warning', status.message, {
			id: NOTICE,
			isDismissible: true,
			actions: [{ label: __('Edge status', 'varnish-edge'), url: status.statusUrl || config.statusUrl }],
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
				setTimeout(() => poll(postId, mine, started), elapsed < FAST_FOR_MS ? FAST_MS : SLOW_MS);
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
