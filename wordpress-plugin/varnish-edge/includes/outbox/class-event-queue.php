<?php
/**
 * Per-request event queue.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Collects what the handlers push during a request, deduplicates it, and at shutdown (after the
 * response has been flushed) writes one batch to the outbox and delivers it; a scheduled post
 * going live in a WP-Cron run is delivered at once (`deliver_now()`). It pulls from nobody:
 * a handler whose invalidation depends on the request's final state defers its push (`defer()`).
 */
class Event_Queue {

	/** @var Invalidation */
	private $pending;

	/** @var Settings */
	private $settings;

	/** @var Outbox_Store */
	private $outbox;

	/** @var Outbox_Delivery */
	private $delivery;

	/** @var callable[] Work to run once at the end of the request, before the batch is built. */
	private $deferred = array();

	/** @var callable[] Request-scoped state to forget once the batch is built. */
	private $cleanup = array();

	/**
	 * Constructor.
	 *
	 * @param Settings        $settings Settings.
	 * @param Outbox_Store    $outbox   Where the batch is stored.
	 * @param Outbox_Delivery $delivery Sends it.
	 */
	public function __construct( Settings $settings, Outbox_Store $outbox, Outbox_Delivery $delivery ) {
		$this->settings = $settings;
		$this->outbox   = $outbox;
		$this->delivery = $delivery;
		$this->pending  = new Invalidation();
	}

	/**
	 * Hook into WordPress: the batch goes out at shutdown, after every other shutdown callback
	 * that may still queue something (the rate limit's released keys run at 99).
	 */
	public function register(): void {
		add_action( 'shutdown', array( $this, 'dispatch' ), 100 );
		add_action( 'publish_future_post', array( $this, 'deliver_now' ), PHP_INT_MAX, 0 );
	}

	/**
	 * Queue an invalidation for the end of the request.
	 */
	public function add( Invalidation $inv ): void {
		$this->pending->merge( $inv );
	}

	/**
	 * Run a callback at the end of the request, before the batch is built (it queues its
	 * invalidation with `add()`): for changes written several times in a request whose
	 * invalidation depends on their final state.
	 */
	public function defer( callable $callback ): void {
		$this->deferred[] = $callback;
	}

	/**
	 * Run a callback once the request's batch is built (to forget request-scoped state).
	 */
	public function after_commit( callable $callback ): void {
		$this->cleanup[] = $callback;
	}

	/**
	 * Build the batch for everything queued in this request and store it in the outbox.
	 *
	 * @return array<int,array<string,mixed>> Events stored (empty when nothing changed).
	 */
	public function commit(): array {
		$deferred       = $this->deferred;
		$this->deferred = array();
		foreach ( $deferred as $callback ) {
			call_user_func( $callback );
		}
		$inv           = $this->pending;
		$this->pending = new Invalidation();
		$cleanup       = $this->cleanup;
		$this->cleanup = array();
		foreach ( $cleanup as $callback ) {
			call_user_func( $callback );
		}
		if ( $inv->is_empty() ) {
			return array();
		}
		Refresh_Urls::resolve( $inv );
		$scheme = new Key_Scheme( $this->settings->key_namespace() );
		$site   = Settings::site_host( home_url() );
		$events = Event_Builder::build( $inv, $site, $scheme, time() );
		if ( $events && $this->settings->is_configured() ) {
			$this->outbox->enqueue( $site, $events );
		}
		/**
		 * The request's events, just stored in the outbox (not yet delivered).
		 *
		 * @param array<int,array<string,mixed>> $events Protocol events (empty: nothing changed).
		 */
		do_action( 'varnish_edge_events_committed', $events );
		return $events;
	}

	/**
	 * Whether anything was queued or deferred in this request so far.
	 */
	private function has_events(): bool {
		return ! $this->pending->is_empty() || array() !== $this->deferred || array() !== $this->cleanup;
	}

	/**
	 * Shutdown handler: flush the response to the browser, then commit and deliver.
	 */
	public function dispatch(): void {
		$has_events = $this->has_events();
		$has_due    = $this->settings->is_configured() && $this->outbox->has_due();
		if ( ! $has_events && ! $has_due ) {
			return;
		}
		if ( function_exists( 'fastcgi_finish_request' ) ) {
			// The browser gets its response now; delivery continues in the background.
			ignore_user_abort( true );
			fastcgi_finish_request();
		}
		$this->commit();
		if ( $this->settings->is_configured() ) {
			$this->delivery->process();
		}
	}

	/**
	 * Action `publish_future_post` (last): a scheduled post went live in a WP-Cron run. Its batch
	 * is committed and delivered now, not at the end of the run. The post is live at the origin
	 * from this moment, and the events due after it in the same run can take long (WordPress's
	 * own `do_pings`, which every publish schedules, waits on each ping site: seconds each where
	 * DNS or the network hangs); until the run ended, the listings the post enters stayed as
	 * Varnish had them, with nothing in the outbox yet to show it. What the rest of the run
	 * changes goes out at its end, as usual.
	 */
	public function deliver_now(): void {
		if ( ! $this->has_events() ) {
			return;
		}
		$this->commit();
		if ( $this->settings->is_configured() ) {
			$this->delivery->process();
		}
	}
}
