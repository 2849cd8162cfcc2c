<?php
/**
 * Wiring.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Builds the services and registers every hook of the plugin in one place.
 */
class Plugin {

	/** @var Plugin|null */
	private static $instance = null;

	/** @var Settings */
	public $settings;
	/** @var Outbox */
	public $outbox;
	/** @var Change_Detector */
	public $detector;
	/** @var Event_Queue */
	public $queue;
	/** @var Surrogate_Keys Collector of the response's keys; writes the headers. */
	public $keys;
	/** @var Query_Keys */
	public $query_keys;
	/** @var Render_Keys */
	public $render_keys;
	/** @var Media_Keys */
	public $media_keys;
	/** @var Rest_Keys */
	public $rest_keys;
	/** @var Comment_Changes */
	public $comments;
	/** @var Term_Changes */
	public $terms;
	/** @var Site_Changes */
	public $site;
	/** @var Option_Changes */
	public $options;
	/** @var User_Changes */
	public $users;
	/** @var Media_Changes */
	public $media;
	/** @var Manual_Purge */
	public $manual;
	/** @var Coalescer */
	public $coalescer;
	/** @var Public_Api */
	public $api;
	/** @var Listing_Order */
	public $listing_order;

	/**
	 * The plugin.
	 *
	 * @return Plugin
	 */
	public static function instance() {
		if ( null === self::$instance ) {
			self::$instance = new self();
		}
		return self::$instance;
	}

	/**
	 * Build the services.
	 */
	private function __construct() {
		$this->settings    = new Settings();
		$this->outbox      = new Outbox( new Webhook_Client( $this->settings ) );
		$this->detector    = new Change_Detector( $this->settings );
		$this->queue       = new Event_Queue( $this->settings, $this->outbox, $this->detector );
		$this->keys        = new Surrogate_Keys( $this->settings );
		$this->query_keys  = new Query_Keys( $this->settings, $this->keys );
		$this->render_keys = new Render_Keys( $this->settings, $this->keys );
		$this->media_keys  = new Media_Keys( $this->settings, $this->keys );
		$this->rest_keys   = new Rest_Keys( $this->settings, $this->keys );
		$this->coalescer   = new Coalescer( $this->queue );
		$this->comments    = new Comment_Changes( $this->settings, $this->queue, $this->coalescer );
		$this->site        = new Site_Changes( $this->settings, $this->queue );
		$this->terms       = new Term_Changes( $this->settings, $this->queue, $this->site );
		$this->options     = new Option_Changes( $this->settings, $this->queue, $this->site );
		$this->users       = new User_Changes( $this->settings, $this->queue );
		$this->media       = new Media_Changes( $this->settings, $this->queue );
		$this->api         = new Public_Api( $this->settings, $this->queue );
		$this->manual      = new Manual_Purge( $this->settings, $this->detector );

		$this->listing_order = new Listing_Order();
	}

	/**
	 * Deactivation: stop the retry schedule (the outbox table stays until uninstall).
	 */
	public static function deactivate() {
		wp_clear_scheduled_hook( Outbox::CRON_HOOK );
	}

	/**
	 * Register every hook.
	 */
	public function register() {
		add_action( 'plugins_loaded', array( Outbox::class, 'maybe_install' ) );
		add_action( 'init', array( $this, 'load_textdomain' ) );

		// Post changes: snapshot before, compare at the end of the request.
		$d = $this->detector;
		add_filter( 'wp_insert_post_data', array( $d, 'on_insert_post_data' ), 10, 4 );
		add_action( 'pre_post_update', array( $d, 'on_pre_post_update' ), 1, 1 );
		add_action( 'transition_post_status', array( $d, 'on_transition_post_status' ), 1, 3 );
		add_action( 'wp_insert_post', array( $d, 'on_insert_post' ), 1, 3 );
		add_action( 'set_object_terms', array( $d, 'on_set_object_terms' ), 1, 6 );
		add_action( 'delete_term_relationships', array( $d, 'on_delete_term_relationships' ), 1, 3 );
		add_action( 'update_option_sticky_posts', array( $d, 'on_sticky_change' ), 1, 2 );
		add_action( 'add_option_sticky_posts', array( $d, 'on_sticky_change' ), 1, 2 );
		foreach ( array( 'update', 'add', 'delete' ) as $op ) {
			add_filter( "{$op}_post_metadata", array( $d, 'on_meta_change' ), 1, 3 );
		}
		foreach ( array( 'added', 'updated', 'deleted' ) as $op ) {
			add_action( "{$op}_post_meta", array( $d, 'on_meta_written' ), 10, 3 );
		}
		add_action( 'before_delete_post', array( $d, 'on_before_delete' ), 1, 1 );
		add_action( 'deleted_post', array( $d, 'on_deleted' ), 1, 1 );

		// Everything else that renders.
		$c = $this->comments;
		add_action( 'wp_insert_comment', array( $c, 'on_comment_inserted' ), 10, 2 );
		add_action( 'transition_comment_status', array( $c, 'on_comment_status' ), 10, 3 );
		add_filter( 'wp_update_comment_data', array( $c, 'on_comment_updating' ), 10, 2 );
		add_action( 'edit_comment', array( $c, 'on_comment_edited' ), 10, 1 );
		add_action( 'delete_comment', array( $c, 'on_comment_deleted' ), 10, 2 );
		$t = $this->terms;
		add_action( 'edit_terms', array( $t, 'on_term_before' ), 10, 2 );
		add_action( 'pre_delete_term', array( $t, 'on_term_before' ), 10, 2 );
		add_action( 'created_term', array( $t, 'on_term_created' ), 10, 3 );
		add_action( 'edited_term', array( $t, 'on_term_edited' ), 10, 3 );
		add_action( 'delete_term', array( $t, 'on_term_deleted' ), 10, 3 );
		$s = $this->site;
		foreach ( array( 'wp_update_nav_menu', 'wp_delete_nav_menu', 'wp_update_nav_menu_item', 'wp_add_nav_menu_item' ) as $hook ) {
			add_action( $hook, array( $s, 'menus_changed' ), 10, 0 );
		}
		add_action( 'switch_theme', array( $s, 'on_switch_theme' ), 10, 1 );
		add_action( 'save_post_wp_global_styles', array( $s, 'on_global_styles_saved' ), 10, 1 );
		add_action( 'delete_post', array( $s, 'on_global_styles_saved' ), 10, 1 );
		add_action( 'customize_save_after', array( $s, 'on_customize_save' ), 10, 0 );
		$o = $this->options;
		add_action( 'updated_option', array( $o, 'on_option_updated' ), 10, 3 );
		add_action( 'added_option', array( $o, 'on_option_added_or_deleted' ), 10, 2 );
		add_action( 'delete_option', array( $o, 'on_option_added_or_deleted' ), 10, 1 );
		add_action( 'activated_plugin', array( $s, 'on_plugin_toggled' ), 10, 2 );
		add_action( 'deactivated_plugin', array( $s, 'on_plugin_toggled' ), 10, 2 );
		add_action( 'upgrader_process_complete', array( $s, 'on_upgrade' ), 10, 2 );
		add_action( '_core_updated_successfully', array( $s, 'on_core_updated' ), 10, 1 );
		$u = $this->users;
		add_filter( 'wp_pre_insert_user_data', array( $u, 'on_user_before' ), 10, 3 );
		add_action( 'profile_update', array( $u, 'on_profile_update' ), 10, 1 );
		add_action( 'delete_user', array( $u, 'on_user_deleting' ), 10, 2 );
		add_action( 'deleted_user', array( $u, 'on_user_deleted' ), 10, 2 );
		$m = $this->media;
		add_action( 'attachment_updated', array( $m, 'on_attachment_changed' ), 10, 1 );
		add_action( 'delete_attachment', array( $m, 'on_attachment_deleted' ), 10, 1 );
		add_action( 'add_attachment', array( $m, 'on_attachment_added' ), 10, 1 );
		foreach ( array( 'added', 'updated', 'deleted' ) as $op ) {
			add_action( "{$op}_post_meta", array( $m, 'on_attachment_meta' ), 10, 3 );
		}
		add_filter( 'wp_update_attachment_metadata', array( $m, 'on_attachment_metadata' ), 10, 2 );

		// Surrogate keys on responses: the main query's keys, then the buffer that sends them all.
		$k = $this->keys;
		add_action( 'template_redirect', array( $this->query_keys, 'on_template_redirect' ), 0 );
		add_action( 'template_redirect', array( $k, 'start' ), 0 );
		add_action( 'the_post', array( $this->query_keys, 'on_the_post' ), 10, 1 );
		add_filter( 'wp_sitemaps_posts_entry', array( $this->query_keys, 'on_sitemap_entry' ), 10, 2 );
		add_filter( 'wp_sitemaps_posts_show_on_front_entry', array( $this->query_keys, 'on_sitemap_home_entry' ), 10, 1 );
		$rk = $this->render_keys;
		add_filter( 'previous_post_link', array( $rk, 'on_adjacent_link' ), 10, 4 );
		add_filter( 'next_post_link', array( $rk, 'on_adjacent_link' ), 10, 4 );
		add_filter( 'get_pages', array( $rk, 'on_get_pages' ), 10, 1 );
		add_filter( 'post_link', array( $rk, 'on_post_link' ), 10, 2 );
		add_filter( 'page_link', array( $rk, 'on_post_link' ), 10, 2 );
		add_filter( 'post_type_link', array( $rk, 'on_post_link' ), 10, 2 );
		add_filter( 'get_the_excerpt', array( $rk, 'on_excerpt' ), 10, 2 );
		add_filter( 'get_comments_number', array( $rk, 'on_comments_number' ), 10, 2 );
		add_filter( 'render_block', array( $rk, 'on_render_block' ), 10, 3 );
		add_filter( 'get_the_terms', array( $rk, 'on_get_the_terms' ), 10, 3 );
		add_filter( 'post_class_taxonomies', array( $rk, 'on_post_class_start' ), 10, 1 );
		add_filter( 'post_class', array( $rk, 'on_post_class_end' ), 10, 1 );
		add_filter( 'the_author', array( $rk, 'on_the_author' ), 10, 1 );
		add_filter( 'author_link', array( $rk, 'on_author_link' ), 10, 2 );
		foreach ( array( 'display_name', 'nickname', 'description', 'user_url' ) as $field ) {
			add_filter( "get_the_author_{$field}", array( $rk, 'on_author_meta' ), 10, 2 );
		}
		add_filter( 'wp_nav_menu', array( $rk, 'on_nav_menu' ), 10, 1 );
		add_action( 'dynamic_sidebar_before', array( $rk, 'on_sidebar' ), 10, 0 );
		$mk = $this->media_keys;
		add_filter( 'wp_get_attachment_url', array( $mk, 'on_attachment_url' ), 10, 2 );
		add_filter( 'wp_get_attachment_image_attributes', array( $mk, 'on_attachment_image_attributes' ), 10, 2 );
		add_filter( 'wp_content_img_tag', array( $mk, 'on_content_img_tag' ), 10, 3 );
		add_filter( 'wp_get_attachment_caption', array( $mk, 'on_attachment_caption' ), 10, 2 );
		add_action( 'rest_api_init', array( $this, 'register_rest_key_filters' ), 100 );
		add_filter( 'rest_post_dispatch', array( $this->rest_keys, 'on_rest_dispatch' ), 10, 3 );
		add_filter( 'rest_pre_serve_request', array( $k, 'on_rest_serve' ), 10, 3 );
		add_filter( 'rest_pre_echo_response', array( $k, 'on_rest_echo' ), PHP_INT_MAX, 3 );

		// Listings: posts published in the same second in one order, render after render.
		add_filter( 'posts_orderby', array( $this->listing_order, 'on_posts_orderby' ), 10, 2 );

		// Public API for other plugins and themes (same queue, coalescing and outbox).
		add_action( 'varnish_edge_purge_keys', array( $this->api, 'purge_keys' ), 10, 3 );
		add_action( 'varnish_edge_purge_urls', array( $this->api, 'purge_urls' ), 10, 3 );
		add_action( 'varnish_edge_purge_all', array( $this->api, 'purge_all' ), 10, 1 );

		// Delivery.
		add_action( 'shutdown', array( $this->coalescer, 'release_due' ), 99 );
		add_action( Coalescer::CRON_HOOK, array( $this->coalescer, 'release_due' ) );
		add_action( 'shutdown', array( $this->queue, 'dispatch' ), 100 );
		add_action( 'publish_future_post', array( $this->queue, 'deliver_now' ), PHP_INT_MAX, 0 );
		add_action( Outbox::CRON_HOOK, array( $this, 'process_outbox' ) );

		// Admin and tools.
		$admin = new Admin_Page( $this->settings, $this->outbox, $this->queue, $this->manual );
		add_action( 'admin_menu', array( $admin, 'add_menu' ) );
		add_action( 'admin_init', array( $admin, 'register_settings' ) );
		add_action( 'admin_notices', array( $admin, 'notices' ) );
		add_action( 'admin_post_varnish_edge_test', array( $admin, 'handle_test' ) );
		add_action( 'admin_post_varnish_edge_flush_outbox', array( $admin, 'handle_flush_outbox' ) );
		add_action( 'admin_post_varnish_edge_purge', array( $admin, 'handle_purge' ) );
		add_filter( 'plugin_action_links_' . plugin_basename( PLUGIN_FILE ), array( $admin, 'action_links' ) );

		$bar = new Admin_Bar();
		add_action( 'admin_bar_menu', array( $bar, 'add_nodes' ), 100 );

		$health = new Site_Health( $this->settings, $this->outbox );
		add_filter( 'site_status_tests', array( $health, 'register' ) );

		if ( defined( 'WP_CLI' ) && WP_CLI && class_exists( '\WP_CLI' ) ) {
			\WP_CLI::add_command( 'varnish-edge', CLI_Command::class );
		}
	}

	/**
	 * Load translations.
	 */
	public function load_textdomain() {
		load_plugin_textdomain( 'varnish-edge', false, dirname( plugin_basename( PLUGIN_FILE ) ) . '/languages' );
	}

	/**
	 * Per-type REST filters (post types and taxonomies exist only after init).
	 */
	public function register_rest_key_filters() {
		foreach ( get_post_types( array( 'show_in_rest' => true ) ) as $type ) {
			add_filter( "rest_prepare_{$type}", array( $this->rest_keys, 'on_rest_post' ), 10, 2 );
		}
		foreach ( get_taxonomies( array( 'show_in_rest' => true ) ) as $taxonomy ) {
			add_filter( "rest_prepare_{$taxonomy}", array( $this->rest_keys, 'on_rest_term' ), 10, 2 );
		}
		add_filter( 'rest_prepare_user', array( $this->rest_keys, 'on_rest_user' ), 10, 2 );
		add_filter( 'rest_prepare_comment', array( $this->rest_keys, 'on_rest_comment' ), 10, 2 );
	}

	/**
	 * WP-Cron retry of the outbox.
	 */
	public function process_outbox() {
		if ( $this->settings->is_configured() ) {
			$this->outbox->process();
		}
	}
}
