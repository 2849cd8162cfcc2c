<?php
/**
 * Composition root.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Builds the plugin's components and has each register its own hooks.
 */
class Plugin {

	/** @var Plugin|null */
	private static $instance = null;

	/** @var Settings */
	public readonly Settings $settings;
	/** @var Outbox_Store */
	public readonly Outbox_Store $outbox;
	/** @var Outbox_Delivery */
	public readonly Outbox_Delivery $delivery;
	/** @var Event_Queue The request's invalidations, pushed by every handler. */
	public readonly Event_Queue $queue;
	/** @var Rate_Limit Rate limit of cheap wide purges (visitors' comments). */
	public readonly Rate_Limit $rate_limit;
	/** @var Manual_Purge Purges asked for by people (admin bar, settings page, WP-CLI). */
	public readonly Manual_Purge $manual;
	/** @var Live_Status_Log Which events each person's recent actions produced. */
	public readonly Live_Status_Log $live_log;
	/** @var Live_Status How far an action's events got (the purger's receipts). */
	public readonly Live_Status $live;

	/**
	 * Components that hook themselves into WordPress, in the order they register.
	 *
	 * @var array<int,object>
	 */
	private array $components;

	/**
	 * The plugin.
	 */
	public static function instance(): Plugin {
		if ( null === self::$instance ) {
			self::$instance = new self();
		}
		return self::$instance;
	}

	/**
	 * Build the components.
	 */
	private function __construct() {
		$this->settings   = new Settings();
		$client           = new Webhook_Client( $this->settings );
		$this->outbox     = new Outbox_Store();
		$this->delivery   = new Outbox_Delivery( $this->outbox, $client, $this->settings );
		$this->queue      = new Event_Queue( $this->settings, $this->outbox, $this->delivery );
		$this->rate_limit = new Rate_Limit( $this->queue );
		$this->manual     = new Manual_Purge( $this->settings );
		$this->live_log   = new Live_Status_Log( $this->settings );
		$this->live       = new Live_Status( $this->settings, $client );

		$keys = new Surrogate_Keys( $this->settings );
		$site = new Site_Changes( $this->settings, $this->queue );

		$this->components = array(
			$this->outbox,
			$this->delivery,
			// What changed: each handler pushes its invalidations to the queue.
			new Post_Changes( $this->settings, $this->queue ),
			new Comment_Changes( $this->settings, $this->queue, $this->rate_limit ),
			new Term_Changes( $this->settings, $this->queue, $site ),
			$site,
			new Option_Changes( $this->settings, $this->queue, $site ),
			new User_Changes( $this->settings, $this->queue ),
			new Media_Changes( $this->settings, $this->queue ),
			new Public_Api( $this->settings, $this->queue ),
			// What a response shows: its keys, and the headers that carry them.
			new Query_Keys( $this->settings, $keys ),
			$keys,
			new Render_Keys( $this->settings, $keys ),
			new Media_Keys( $this->settings, $keys ),
			new Rest_Keys( $this->settings, $keys ),
			new Listing_Order(),
			// What WordPress's own Site Health "Page cache" test counts as this cache.
			new Page_Cache_Headers( $this->settings ),
			// End of the request: released rate-limited keys (99), then the batch (100).
			$this->rate_limit,
			$this->queue,
			// People's tools.
			new Admin_Page( $this->settings, $this->outbox, $this->delivery, $this->queue, $this->manual, $this->live_log, $this->live ),
			new Admin_Bar(),
			new Site_Health( $this->settings, $this->outbox, $this->live_log, $this->live ),
			// How far each person's change got: recorded, answered, shown in the block editor.
			$this->live_log,
			new Live_Status_Route( $this->live_log, $this->live ),
			new Editor_Live_Notice( $this->settings ),
		);
	}

	/**
	 * Register every component's hooks, the translations and the WP-CLI command.
	 */
	public function register(): void {
		add_action( 'init', array( $this, 'load_textdomain' ) );
		foreach ( $this->components as $component ) {
			$component->register();
		}
		CLI_Command::register();
	}

	/**
	 * Load translations.
	 */
	public function load_textdomain(): void {
		load_plugin_textdomain( 'varnish-edge', false, dirname( plugin_basename( PLUGIN_FILE ) ) . '/languages' );
	}
}
