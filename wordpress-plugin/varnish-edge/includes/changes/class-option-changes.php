<?php
/**
 * Invalidations for option changes.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Options: the site's name, tagline, icon and logo soft-purge the pages showing them, other
 * rendering options ban the site, widget and menu-location options purge their component,
 * options mapped by `varnish_edge_option_keys` purge their keys, unknown autoloaded options
 * changed from an admin screen ban the site.
 */
class Option_Changes extends Change_Handler {

	/**
	 * Options whose change alters how every page renders.
	 */
	const SITE_OPTIONS = array(
		'home', 'siteurl', 'permalink_structure', 'category_base', 'tag_base',
		'show_on_front', 'page_on_front', 'page_for_posts', 'posts_per_page', 'posts_per_rss', 'rss_use_excerpt',
		'date_format', 'time_format', 'start_of_week', 'timezone_string', 'gmt_offset', 'WPLANG',
		'blog_public', 'default_comments_page', 'comments_per_page', 'page_comments', 'comment_order',
		'thread_comments', 'thread_comments_depth', 'show_avatars', 'avatar_default', 'avatar_rating',
		'require_name_email', 'comment_registration', 'close_comments_for_old_posts', 'close_comments_days_old',
		'show_comments_cookies_opt_in', 'wp_page_for_privacy_policy', 'stylesheet', 'template', 'uploads_use_yearmonth_folders',
	);

	/**
	 * The site's identity, option => key part: shown nearly everywhere, but a change of it takes
	 * nothing out of public view (the old name or icon once more is harmless), so the responses
	 * that read it (key `site-<part>`, `Render_Keys`) are purged soft and the most visited pages
	 * re-fetched, instead of emptying the cache.
	 */
	const IDENTITY_OPTIONS = array(
		'blogname'        => 'name',
		'blogdescription' => 'tagline',
		'site_icon'       => 'icon',
		'site_logo'       => 'logo',
	);

	/**
	 * Options that never change what a page shows (WordPress's bookkeeping), filterable with
	 * `varnish_edge_ignored_options`. A trailing `*` matches a prefix.
	 */
	const IGNORED_OPTIONS = array(
		'_transient_*', '_site_transient_*', 'cron', 'rewrite_rules', 'recently_activated', 'recently_edited', 'uninstall_plugins',
		'active_plugins', 'db_version', 'db_upgraded', 'initial_db_version', 'fresh_site', 'can_compress_scripts', 'user_count',
		'auto_updater.lock', 'core_updater.lock', '*_children', 'auth_key', 'auth_salt', 'logged_in_key', 'logged_in_salt',
		'nonce_key', 'nonce_salt', 'secure_auth_key', 'secure_auth_salt', 'recovery_keys', 'recovery_mode_email_last_sent',
		'admin_email_lifespan', 'https_detection_errors', 'finished_*', 'dashboard_widget_options', 'theme_switched',
		'wp_force_deactivated_plugins', 'auto_plugin_theme_update_emails', 'auto_update_*', 'new_admin_email', 'adminhash',
		'varnish_edge*', 'widget_*', 'sidebars_widgets', 'theme_mods_*', 'comment_moderation', 'moderation_keys',
		'disallowed_keys', 'comment_max_links', 'moderation_notify', 'comments_notify', 'admin_email', 'mailserver_*',
		'default_*', '*_user_roles', 'use_balanceTags', 'use_smilies', 'ping_sites', 'upload_path', 'upload_url_path', 'rss_*', 'akismet_*',
	);

	/**
	 * Constructor.
	 *
	 * @param Settings     $settings Settings.
	 * @param Event_Queue  $queue    The request's queue.
	 * @param Site_Changes $site     Site-wide and component invalidations.
	 */
	public function __construct( Settings $settings, Event_Queue $queue, private Site_Changes $site ) {
		parent::__construct( $settings, $queue );
	}

	/**
	 * Hook into WordPress.
	 */
	public function register(): void {
		add_action( 'updated_option', array( $this, 'on_option_updated' ), 10, 3 );
		add_action( 'added_option', array( $this, 'on_option_added_or_deleted' ), 10, 2 );
		add_action( 'delete_option', array( $this, 'on_option_added_or_deleted' ), 10, 1 );
	}

	/**
	 * Action `updated_option`: rendering options, widgets, menu locations.
	 */
	public function on_option_updated( string $option, mixed $old, mixed $new ): void {
		if ( $old === $new ) {
			return;
		}
		if ( $this->mapped_option_changed( $option, $old, $new ) ) {
			return;
		}
		if ( isset( self::IDENTITY_OPTIONS[ $option ] ) ) {
			$this->site->identity_changed( self::IDENTITY_OPTIONS[ $option ], 'option ' . $option . ' changed' );
		} elseif ( in_array( $option, self::SITE_OPTIONS, true ) ) {
			$this->site->site_changed( 'option ' . $option . ' changed' );
		} elseif ( Settings::OPTION === $option ) {
			// Cached pages carry keys of the old namespace: only a full purge reaches them.
			if ( ( is_array( $old ) ? ( $old['namespace'] ?? '' ) : '' ) !== ( is_array( $new ) ? ( $new['namespace'] ?? '' ) : '' ) ) {
				$this->site->site_changed( 'surrogate key namespace changed' );
			}
		} elseif ( 'sidebars_widgets' === $option || 0 === strpos( $option, 'widget_' ) ) {
			$this->site->widgets_changed();
		} elseif ( 0 === strpos( $option, 'theme_mods_' ) ) {
			$old_locations = is_array( $old ) ? ( $old['nav_menu_locations'] ?? array() ) : array();
			$new_locations = is_array( $new ) ? ( $new['nav_menu_locations'] ?? array() ) : array();
			$old_rest      = is_array( $old ) ? array_diff_key( $old, array( 'nav_menu_locations' => 1 ) ) : $old;
			$new_rest      = is_array( $new ) ? array_diff_key( $new, array( 'nav_menu_locations' => 1 ) ) : $new;
			if ( $old_rest != $new_rest ) { // Loose on purpose: same entries in any order.
				$this->site->site_changed( 'theme settings changed' );
			} elseif ( $old_locations != $new_locations ) { // Loose on purpose: same entries in any order.
				$this->site->menus_changed();
			}
		} else {
			$this->unknown_option_changed( $option );
		}
	}

	/**
	 * Actions `added_option` / `delete_option` (before the row goes, while an autoloaded option is
	 * still in the autoloaded set): options other code maps to keys, the site's identity (a
	 * logo set for the first time or removed), and unknown autoloaded options written from an
	 * admin screen.
	 *
	 * @param string $option Option name.
	 * @param mixed  $value  Value (added_option only).
	 */
	public function on_option_added_or_deleted( string $option, mixed $value = null ): void {
		$deleted = 'delete_option' === current_action();
		if ( $this->mapped_option_changed( $option, null, $value ) || in_array( $option, self::SITE_OPTIONS, true ) ) {
			return;
		}
		if ( isset( self::IDENTITY_OPTIONS[ $option ] ) ) {
			$this->site->identity_changed( self::IDENTITY_OPTIONS[ $option ], 'option ' . $option . ( $deleted ? ' deleted' : ' added' ) );
		} else {
			$this->unknown_option_changed( $option, $deleted );
		}
	}

	/**
	 * Keys other code maps an option to (`varnish_edge_option_keys`); queued hard.
	 *
	 * @return bool Whether the option is mapped (then nothing else is done for it).
	 */
	private function mapped_option_changed( string $option, mixed $old, mixed $new ): bool {
		/**
		 * Keys (names without the namespace) of the pages that show an option. Return an array
		 * (possibly empty: the option shows nowhere) to replace the plugin's own rules for it;
		 * null keeps them.
		 *
		 * @param string[]|null $keys   Keys, or null when not mapped.
		 * @param string        $option Option name.
		 * @param mixed         $old    Old value (null when added).
		 * @param mixed         $new    New value (null when deleted).
		 */
		$keys = apply_filters( 'varnish_edge_option_keys', null, $option, $old, $new );
		if ( ! is_array( $keys ) ) {
			return false;
		}
		$s    = $this->scheme();
		$tags = array();
		foreach ( $keys as $name ) {
			if ( is_scalar( $name ) && '' !== trim( (string) $name ) ) {
				$tags[] = $s->custom( (string) $name );
			}
		}
		if ( $tags ) {
			$this->queue( ( new Invalidation() )->tags( $tags )->reason( 'option ' . $option . ' changed' ) );
		}
		return true;
	}

	/**
	 * An option the plugin does not know changed. When it is autoloaded (WordPress loads it on
	 * every page, so a theme or plugin may print it anywhere) and an admin screen changed it (an
	 * editor's decision, not a counter a plugin bumps on every visit), nobody can say which pages
	 * show it: the whole site is invalidated, with the option named in the event. Only form
	 * submissions (POST) count: admin page views write bookkeeping options of their own.
	 *
	 * @param string $option  Option name.
	 * @param bool   $deleted The option is being deleted.
	 */
	private function unknown_option_changed( string $option, bool $deleted = false ): void {
		$method = isset( $_SERVER['REQUEST_METHOD'] ) ? strtoupper( sanitize_key( wp_unslash( $_SERVER['REQUEST_METHOD'] ) ) ) : 'GET';
		// A form submitted on an admin screen; admin page views write bookkeeping options.
		if ( ! is_admin() || 'POST' !== $method || wp_doing_ajax() || wp_doing_cron() || ( defined( 'WP_CLI' ) && WP_CLI ) || $this->is_ignored_option( $option ) ) {
			return;
		}
		if ( ! array_key_exists( $option, wp_load_alloptions() ) ) {
			return;
		}
		$this->site->site_changed( sprintf( 'option %s %s from an admin screen', $option, $deleted ? 'deleted' : 'changed' ) );
	}

	/**
	 * Whether an option is WordPress's (or this plugin's) bookkeeping.
	 */
	private function is_ignored_option( string $option ): bool {
		/**
		 * Options whose changes from admin screens never invalidate the site. An entry ending in
		 * `*` matches a prefix, one starting with `*` a suffix.
		 *
		 * @param string[] $options Option names or patterns.
		 */
		foreach ( (array) apply_filters( 'varnish_edge_ignored_options', self::IGNORED_OPTIONS ) as $pattern ) {
			$pattern = (string) $pattern;
			if ( $pattern === $option
				|| ( '*' === substr( $pattern, -1 ) && 0 === strpos( $option, substr( $pattern, 0, -1 ) ) )
				|| ( '*' === substr( $pattern, 0, 1 ) && substr( $option, -( strlen( $pattern ) - 1 ) ) === substr( $pattern, 1 ) ) ) {
				return true;
			}
		}
		return false;
	}
}
