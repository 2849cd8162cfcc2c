<?php
/**
 * Invalidations for changes other than posts.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Comments, terms, menus, widgets, customizer, theme, rendering options, users, attachments.
 */
class Related_Changes {

	/**
	 * Options whose change alters how every page renders.
	 */
	const SITE_OPTIONS = array(
		'blogname', 'blogdescription', 'home', 'siteurl', 'permalink_structure', 'category_base', 'tag_base',
		'show_on_front', 'page_on_front', 'page_for_posts', 'posts_per_page', 'posts_per_rss', 'rss_use_excerpt',
		'date_format', 'time_format', 'start_of_week', 'timezone_string', 'gmt_offset', 'WPLANG', 'site_icon',
		'blog_public', 'default_comments_page', 'comments_per_page', 'page_comments', 'comment_order',
		'thread_comments', 'thread_comments_depth', 'show_avatars', 'avatar_default', 'avatar_rating',
		'require_name_email', 'comment_registration', 'close_comments_for_old_posts', 'close_comments_days_old',
		'show_comments_cookies_opt_in', 'wp_page_for_privacy_policy', 'stylesheet', 'template', 'uploads_use_yearmonth_folders',
	);

	/** @var Settings */
	private $settings;

	/** @var Event_Queue */
	private $queue;

	/** @var Change_Detector */
	private $detector;

	/** @var array<int,array> Term snapshots before edit/delete. */
	private $terms_before = array();

	/** @var array<int,array> User snapshots before update. */
	private $users_before = array();

	/** @var array<int,string[]|null> File URLs of attachments before the request rewrote their metadata (null: it had none). */
	private $media_before = array();

	/** @var array<int,bool> Attachments created in this request (nothing cached can show them). */
	private $new_attachments = array();

	/** @var Coalescer */
	private $coalescer;

	/** @var array<int,string> Attachments whose alt text or file meta changed in this request (first key). */
	private $attachment_meta = array();

	/**
	 * Attachment meta shown on pages: alt text and the file.
	 */
	const ATTACHMENT_META = array( '_wp_attachment_image_alt', '_wp_attached_file', '_wp_attachment_metadata' );

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
	 * @param Settings        $settings  Settings.
	 * @param Event_Queue     $queue     Queue.
	 * @param Change_Detector $detector  Post rules (embedding lookups).
	 * @param Coalescer|null  $coalescer Rate limit of cheap wide purges (a new one when null).
	 */
	public function __construct( Settings $settings, Event_Queue $queue, Change_Detector $detector, ?Coalescer $coalescer = null ) {
		$this->settings  = $settings;
		$this->queue     = $queue;
		$this->detector  = $detector;
		$this->coalescer = $coalescer ? $coalescer : new Coalescer( $queue );
	}

	/**
	 * Key scheme.
	 *
	 * @return Key_Scheme
	 */
	private function scheme() {
		return new Key_Scheme( $this->settings->key_namespace() );
	}

	/**
	 * Queue an invalidation.
	 *
	 * @param Invalidation $inv Invalidation.
	 */
	private function queue( Invalidation $inv ) {
		$this->queue->add( $inv );
	}

	/* ------------------------------------------------------------ comments */

	/**
	 * Invalidate the pages showing a post's comments and the comment feeds.
	 *
	 * @param int    $post_id Post id.
	 * @param string $reason  Reason.
	 * @param bool   $soft    Soft purge (additions) or hard (removals).
	 */
	private function comments_changed( $post_id, $reason, $soft ) {
		$post = get_post( $post_id );
		if ( ! $post || 'publish' !== $post->post_status ) {
			return;
		}
		$s = $this->scheme();
		$this->queue( ( new Invalidation() )->tags( array( $s->comments( $post_id ), $s->listing( 'comments' ) ), $soft )->reason( $reason ) );
	}

	/**
	 * Action `wp_insert_comment`.
	 *
	 * @param int         $id      Comment id.
	 * @param \WP_Comment $comment Comment.
	 */
	public function on_comment_inserted( $id, $comment ) {
		if ( '1' !== (string) $comment->comment_approved ) {
			return;
		}
		if ( ! current_user_can( 'moderate_comments' ) ) {
			// Anyone can post an auto-approved comment: its (soft) purge of the post and of every
			// page showing recent comments goes out at most once per window per key, the rest
			// at the window's end.
			$post = get_post( (int) $comment->comment_post_ID );
			if ( $post && 'publish' === $post->post_status ) {
				$s = $this->scheme();
				$this->coalescer->add( array( $s->comments( (int) $post->ID ), $s->listing( 'comments' ) ), true, sprintf( 'comment %d added', $id ) );
			}
			return;
		}
		$this->comments_changed( (int) $comment->comment_post_ID, sprintf( 'comment %d added', $id ), true );
	}

	/**
	 * Action `transition_comment_status`.
	 *
	 * @param string      $new_status New.
	 * @param string      $old_status Old.
	 * @param \WP_Comment $comment    Comment.
	 */
	public function on_comment_status( $new_status, $old_status, $comment ) {
		if ( 'approved' === $new_status || 'approved' === $old_status ) {
			$this->comments_changed( (int) $comment->comment_post_ID, sprintf( 'comment %d %s', $comment->comment_ID, $new_status ), 'approved' === $new_status );
		}
	}

	/**
	 * Action `edit_comment`.
	 *
	 * @param int $id Comment id.
	 */
	public function on_comment_edited( $id ) {
		$comment = get_comment( $id );
		if ( $comment && '1' === (string) $comment->comment_approved ) {
			$this->comments_changed( (int) $comment->comment_post_ID, sprintf( 'comment %d edited', $id ), true );
		}
	}

	/**
	 * Action `delete_comment` (before the row goes).
	 *
	 * @param int         $id      Comment id.
	 * @param \WP_Comment $comment Comment.
	 */
	public function on_comment_deleted( $id, $comment = null ) {
		$comment = $comment instanceof \WP_Comment ? $comment : get_comment( $id );
		if ( $comment && '1' === (string) $comment->comment_approved ) {
			$this->comments_changed( (int) $comment->comment_post_ID, sprintf( 'comment %d deleted', $id ), false );
		}
	}

	/* ---------------------------------------------------------------- terms */

	/**
	 * Snapshot of a term's public URL.
	 *
	 * @param int    $term_id  Term id.
	 * @param string $taxonomy Taxonomy.
	 * @return array
	 */
	private function term_state( $term_id, $taxonomy ) {
		$link = is_taxonomy_viewable( $taxonomy ) ? get_term_link( (int) $term_id, $taxonomy ) : '';
		return array(
			'taxonomy' => $taxonomy,
			'link'     => is_string( $link ) ? $link : '',
		);
	}

	/**
	 * Action `edit_terms` / `pre_delete_term`: remember the URL before it changes.
	 *
	 * @param int    $term_id  Term id.
	 * @param string $taxonomy Taxonomy.
	 */
	public function on_term_before( $term_id, $taxonomy ) {
		if ( ! isset( $this->terms_before[ (int) $term_id ] ) ) {
			$this->terms_before[ (int) $term_id ] = $this->term_state( $term_id, $taxonomy );
		}
	}

	/**
	 * Action `created_term`.
	 *
	 * @param int    $term_id  Term id.
	 * @param int    $tt_id    Term taxonomy id.
	 * @param string $taxonomy Taxonomy.
	 */
	public function on_term_created( $term_id, $tt_id, $taxonomy ) {
		if ( ! $this->is_content_term_change( $taxonomy ) ) {
			return;
		}
		$s    = $this->scheme();
		$link = get_term_link( (int) $term_id, $taxonomy );
		$this->queue(
			( new Invalidation() )
				->tags( array( $s->rest_collection( $this->rest_base( $taxonomy ) ) ), true )
				->urls( is_string( $link ) ? array( $link ) : array() )
				->reason( sprintf( 'term %d created', $term_id ) )
		);
	}

	/**
	 * Routes a term change: menus (terms of `nav_menu`) go to the menu invalidation; terms of
	 * taxonomies that never show on public pages need nothing.
	 *
	 * @param string $taxonomy Taxonomy.
	 * @return bool Whether the change is one of a public content taxonomy, to handle as such.
	 */
	private function is_content_term_change( $taxonomy ) {
		if ( 'nav_menu' === $taxonomy ) {
			$this->menus_changed();
			return false;
		}
		return is_taxonomy_viewable( $taxonomy );
	}

	/**
	 * Action `edited_term`.
	 *
	 * @param int    $term_id  Term id.
	 * @param int    $tt_id    Term taxonomy id.
	 * @param string $taxonomy Taxonomy.
	 */
	public function on_term_edited( $term_id, $tt_id, $taxonomy ) {
		if ( ! $this->is_content_term_change( $taxonomy ) ) {
			return;
		}
		$s      = $this->scheme();
		$before = $this->terms_before[ (int) $term_id ] ?? array( 'link' => '' );
		$after  = $this->term_state( $term_id, $taxonomy );
		$inv    = ( new Invalidation() )
			->tags( array( $s->term( $term_id ), $s->term_listing( $term_id ), $s->rest_term( $term_id ) ) )
			->tags( array( $s->rest_collection( $this->rest_base( $taxonomy ) ) ), true )
			->reason( sprintf( 'term %d edited', $term_id ) );
		if ( '' !== $before['link'] && $before['link'] !== $after['link'] ) {
			// Slug or parent changed: old archive, its pages, feeds and child terms move, and
			// pages printing the slug (post classes) change.
			$inv->prefixes( array( $before['link'] ) )->urls( array( $after['link'] ) )->tags( array( $s->term_slug( $term_id ) ) );
		}
		unset( $this->terms_before[ (int) $term_id ] );
		$this->queue( $inv );
	}

	/**
	 * Action `delete_term`.
	 *
	 * @param int    $term_id  Term id.
	 * @param int    $tt_id    Term taxonomy id.
	 * @param string $taxonomy Taxonomy.
	 */
	public function on_term_deleted( $term_id, $tt_id, $taxonomy ) {
		if ( ! $this->is_content_term_change( $taxonomy ) ) {
			return;
		}
		$s      = $this->scheme();
		$before = $this->terms_before[ (int) $term_id ] ?? array( 'link' => '' );
		$this->queue(
			( new Invalidation() )
				->tags( array( $s->term( $term_id ), $s->term_slug( $term_id ), $s->term_listing( $term_id ), $s->rest_term( $term_id ), $s->rest_collection( $this->rest_base( $taxonomy ) ) ) )
				->prefixes( '' !== $before['link'] ? array( $before['link'] ) : array() )
				->reason( sprintf( 'term %d deleted', $term_id ) )
		);
	}

	/**
	 * REST base of a taxonomy.
	 *
	 * @param string $taxonomy Taxonomy.
	 * @return string
	 */
	private function rest_base( $taxonomy ) {
		$object = get_taxonomy( $taxonomy );
		return ( $object && $object->rest_base ) ? $object->rest_base : $taxonomy;
	}

	/* ------------------------------------------------- menus, widgets, site */

	/**
	 * Menus (classic menus, menu items, locations): every page that renders a menu.
	 */
	public function menus_changed() {
		$this->queue( ( new Invalidation() )->tags( array( $this->scheme()->listing( 'menus' ) ), true )->reason( 'menus changed' ) );
	}

	/**
	 * Widgets: every page that renders a sidebar.
	 */
	public function widgets_changed() {
		$this->queue( ( new Invalidation() )->tags( array( $this->scheme()->listing( 'widgets' ) ), true )->reason( 'widgets changed' ) );
	}

	/**
	 * The whole site.
	 *
	 * @param string $reason Reason.
	 */
	public function site_changed( $reason ) {
		$this->queue( ( new Invalidation() )->everything()->reason( $reason ) );
	}

	/**
	 * Actions `save_post_wp_global_styles` / `delete_post` (of that type): WordPress 6.1 keeps the
	 * front end's global stylesheet in a transient for a minute, so the page Varnish fetches
	 * after the purge would still carry the old CSS, for the whole TTL. Drop that cache before
	 * the site-wide purge goes out.
	 *
	 * @param int $post_id Post id.
	 */
	public function on_global_styles_saved( $post_id = 0 ) {
		if ( 'delete_post' === current_action() && 'wp_global_styles' !== get_post_type( (int) $post_id ) ) {
			return;
		}
		foreach ( array( 'global_styles_', 'global_styles_svg_filters_' ) as $prefix ) {
			delete_transient( $prefix . get_stylesheet() );
		}
	}

	/**
	 * Action `switch_theme`.
	 *
	 * @param string $name Theme name.
	 */
	public function on_switch_theme( $name ) {
		$this->site_changed( 'theme switched to ' . sanitize_text_field( (string) $name ) );
	}

	/**
	 * Action `customize_save_after`.
	 */
	public function on_customize_save() {
		$this->site_changed( 'customizer saved' );
	}

	/**
	 * Action `updated_option`: rendering options, widgets, menu locations.
	 *
	 * @param string $option Option name.
	 * @param mixed  $old    Old value.
	 * @param mixed  $new    New value.
	 */
	public function on_option_updated( $option, $old, $new ) {
		if ( $old === $new ) {
			return;
		}
		if ( $this->mapped_option_changed( (string) $option, $old, $new ) ) {
			return;
		}
		if ( in_array( $option, self::SITE_OPTIONS, true ) ) {
			$this->site_changed( 'option ' . $option . ' changed' );
		} elseif ( Settings::OPTION === $option ) {
			// Cached pages carry keys of the old namespace: only a full purge reaches them.
			if ( ( is_array( $old ) ? ( $old['namespace'] ?? '' ) : '' ) !== ( is_array( $new ) ? ( $new['namespace'] ?? '' ) : '' ) ) {
				$this->site_changed( 'surrogate key namespace changed' );
			}
		} elseif ( 'sidebars_widgets' === $option || 0 === strpos( $option, 'widget_' ) ) {
			$this->widgets_changed();
		} elseif ( 0 === strpos( $option, 'theme_mods_' ) ) {
			$old_locations = is_array( $old ) ? ( $old['nav_menu_locations'] ?? array() ) : array();
			$new_locations = is_array( $new ) ? ( $new['nav_menu_locations'] ?? array() ) : array();
			$old_rest      = is_array( $old ) ? array_diff_key( $old, array( 'nav_menu_locations' => 1 ) ) : $old;
			$new_rest      = is_array( $new ) ? array_diff_key( $new, array( 'nav_menu_locations' => 1 ) ) : $new;
			if ( $old_rest != $new_rest ) { // Loose on purpose: same entries in any order.
				$this->site_changed( 'theme settings changed' );
			} elseif ( $old_locations != $new_locations ) { // Loose on purpose: same entries in any order.
				$this->menus_changed();
			}
		} else {
			$this->unknown_option_changed( (string) $option );
		}
	}

	/**
	 * Actions `added_option` / `delete_option` (before the row goes, while an autoloaded option is
	 * still in the autoloaded set): options other code maps to keys, and unknown autoloaded
	 * options written from an admin screen.
	 *
	 * @param string $option Option name.
	 * @param mixed  $value  Value (added_option only).
	 */
	public function on_option_added_or_deleted( $option, $value = null ) {
		if ( ! $this->mapped_option_changed( (string) $option, null, $value ) && ! in_array( $option, self::SITE_OPTIONS, true ) ) {
			$this->unknown_option_changed( (string) $option, 'delete_option' === current_action() );
		}
	}

	/**
	 * Keys other code maps an option to (`varnish_edge_option_keys`); queued hard.
	 *
	 * @param string $option Option name.
	 * @param mixed  $old    Old value.
	 * @param mixed  $new    New value.
	 * @return bool Whether the option is mapped (then nothing else is done for it).
	 */
	private function mapped_option_changed( $option, $old, $new ) {
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
	private function unknown_option_changed( $option, $deleted = false ) {
		$method = isset( $_SERVER['REQUEST_METHOD'] ) ? strtoupper( sanitize_key( wp_unslash( $_SERVER['REQUEST_METHOD'] ) ) ) : 'GET';
		// A form submitted on an admin screen; admin page views write bookkeeping options.
		if ( ! is_admin() || 'POST' !== $method || wp_doing_ajax() || wp_doing_cron() || ( defined( 'WP_CLI' ) && WP_CLI ) || $this->is_ignored_option( $option ) ) {
			return;
		}
		if ( ! array_key_exists( $option, wp_load_alloptions() ) ) {
			return;
		}
		$this->site_changed( sprintf( 'option %s %s from an admin screen', $option, $deleted ? 'deleted' : 'changed' ) );
	}

	/**
	 * Whether an option is WordPress's (or this plugin's) bookkeeping.
	 *
	 * @param string $option Option name.
	 * @return bool
	 */
	private function is_ignored_option( $option ) {
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

	/* ------------------------------------------- plugins, themes, core updates */

	/**
	 * Actions `activated_plugin` / `deactivated_plugin`: a plugin may change any page.
	 *
	 * @param string $plugin       Plugin file.
	 * @param bool   $network_wide Network-wide.
	 */
	public function on_plugin_toggled( $plugin, $network_wide = false ) {
		$this->site_changed( sprintf( 'plugin %s %s', sanitize_text_field( (string) $plugin ), 'activated_plugin' === current_action() ? 'activated' : 'deactivated' ) );
	}

	/**
	 * Action `upgrader_process_complete`: plugins, themes, core or translations installed or
	 * updated.
	 *
	 * @param \WP_Upgrader|null $upgrader Upgrader.
	 * @param array             $extra    Details (`type`, `action`, `plugins`, `themes`).
	 */
	public function on_upgrade( $upgrader = null, $extra = array() ) {
		$extra = is_array( $extra ) ? $extra : array();
		$type  = sanitize_key( (string) ( $extra['type'] ?? 'unknown' ) );
		$names = array();
		foreach ( array( 'plugins', 'themes' ) as $list ) {
			foreach ( (array) ( $extra[ $list ] ?? array() ) as $name ) {
				$names[] = sanitize_text_field( (string) $name );
			}
		}
		foreach ( array( 'plugin', 'theme' ) as $one ) {
			if ( isset( $extra[ $one ] ) && is_string( $extra[ $one ] ) ) {
				$names[] = sanitize_text_field( $extra[ $one ] );
			}
		}
		$this->site_changed( trim( sprintf( '%s %s %s', $type, sanitize_key( (string) ( $extra['action'] ?? 'update' ) ), implode( ', ', array_slice( $names, 0, 10 ) ) ) ) );
	}

	/**
	 * Action `_core_updated_successfully`.
	 *
	 * @param string $version New version.
	 */
	public function on_core_updated( $version = '' ) {
		$this->site_changed( 'WordPress updated to ' . sanitize_text_field( (string) $version ) );
	}

	/* ---------------------------------------------------------------- users */

	/**
	 * Filter `wp_pre_insert_user_data`: snapshot the public profile before an update.
	 *
	 * @param array $data    User data.
	 * @param bool  $update  Update.
	 * @param int   $user_id User id.
	 * @return array
	 */
	public function on_user_before( $data, $update = false, $user_id = null ) {
		if ( $update && $user_id ) {
			$this->users_before[ (int) $user_id ] = $this->user_state( (int) $user_id );
		}
		return $data;
	}

	/**
	 * Public profile fields of a user.
	 *
	 * @param int $user_id User id.
	 * @return array
	 */
	private function user_state( $user_id ) {
		$user = get_userdata( $user_id );
		if ( ! $user ) {
			return array();
		}
		return array(
			'display_name' => $user->display_name,
			'nicename'     => $user->user_nicename,
			'url'          => $user->user_url,
			'description'  => (string) get_user_meta( $user_id, 'description', true ),
			'link'         => get_author_posts_url( $user_id, $user->user_nicename ),
		);
	}

	/**
	 * Action `profile_update` (after meta is saved).
	 *
	 * @param int $user_id User id.
	 */
	public function on_profile_update( $user_id ) {
		$user_id = (int) $user_id;
		$before  = $this->users_before[ $user_id ] ?? null;
		unset( $this->users_before[ $user_id ] );
		$after = $this->user_state( $user_id );
		if ( null !== $before && $before === $after ) {
			return;
		}
		if ( ! count_user_posts( $user_id, 'post', true ) && ! count_user_posts( $user_id, 'page', true ) ) {
			return;
		}
		$s   = $this->scheme();
		$inv = ( new Invalidation() )
			->tags( array( $s->user( $user_id ), $s->author_listing( $user_id ), $s->rest_user( $user_id ) ), true )
			->reason( sprintf( 'user %d profile updated', $user_id ) );
		if ( null !== $before && $before['link'] !== $after['link'] ) {
			$inv->prefixes( array( $before['link'] ) )->urls( array( $after['link'] ) );
		}
		$this->queue( $inv );
	}

	/**
	 * Action `deleted_user`: posts reassigned with direct SQL, so purge both authors.
	 *
	 * @param int      $user_id  Deleted user.
	 * @param int|null $reassign Reassigned to.
	 */
	public function on_user_deleted( $user_id, $reassign = null ) {
		$s    = $this->scheme();
		$tags = array( $s->user( $user_id ), $s->author_listing( $user_id ), $s->rest_user( $user_id ) );
		if ( $reassign ) {
			$tags[] = $s->author_listing( (int) $reassign );
		}
		$this->queue( ( new Invalidation() )->tags( $tags )->reason( sprintf( 'user %d deleted', $user_id ) ) );
	}

	/* ---------------------------------------------------------- attachments */

	/**
	 * Action `attachment_updated`: the attachment page and every published post that embeds it.
	 *
	 * @param int $attachment_id Attachment id.
	 */
	public function on_attachment_changed( $attachment_id ) {
		$attachment_id = (int) $attachment_id;
		$this->queue( $this->attachment_shown( $attachment_id, sprintf( 'attachment %d changed', $attachment_id ) ) );
	}

	/**
	 * Action `add_attachment`: created in this request, so no cached page can show it yet.
	 *
	 * @param int $attachment_id Attachment id.
	 */
	public function on_attachment_added( $attachment_id ) {
		$attachment_id                           = (int) $attachment_id;
		$this->new_attachments[ $attachment_id ] = true;
		$this->queue->after_commit(
			function () use ( $attachment_id ) {
				unset( $this->new_attachments[ $attachment_id ] );
			}
		);
	}

	/**
	 * Actions `added_post_meta` / `updated_post_meta` / `deleted_post_meta`: an attachment's alt
	 * text or file changed (also when written without an attachment update, as the media
	 * modal and the REST API write alt text).
	 *
	 * @param int|int[] $meta_id   Meta id(s).
	 * @param int       $object_id Post id.
	 * @param string    $meta_key  Meta key.
	 */
	public function on_attachment_meta( $meta_id, $object_id, $meta_key ) {
		$object_id = (int) $object_id;
		if ( ! in_array( $meta_key, self::ATTACHMENT_META, true ) || isset( $this->attachment_meta[ $object_id ] ) || 'attachment' !== get_post_type( $object_id ) ) {
			return;
		}
		$this->attachment_meta[ $object_id ] = (string) $meta_key;
		// Decided at the end of the request: WordPress writes the file meta of a new upload
		// before `add_attachment` says it is new.
		$this->queue->defer(
			function () use ( $object_id ) {
				$key = $this->attachment_meta[ $object_id ] ?? '';
				unset( $this->attachment_meta[ $object_id ] );
				if ( ! isset( $this->new_attachments[ $object_id ] ) && 'attachment' === get_post_type( $object_id ) ) {
					$this->queue( $this->attachment_shown( $object_id, sprintf( 'attachment %d changed (%s)', $object_id, $key ) ) );
				}
			}
		);
	}

	/**
	 * Action `delete_attachment`: fires before `wp_delete_attachment()` deletes the meta and the
	 * files, so the metadata still names every file. Besides what shows the attachment, every file
	 * URL is purged: static files are cached for days, and a deleted image (a takedown) must stop
	 * being served now.
	 *
	 * @param int $attachment_id Attachment id.
	 */
	public function on_attachment_deleted( $attachment_id ) {
		$attachment_id = (int) $attachment_id;
		$files         = Attachment_Files::urls( $attachment_id, wp_get_attachment_metadata( $attachment_id ), get_post_meta( $attachment_id, '_wp_attachment_backup_sizes', true ) );
		$this->queue( $this->attachment_shown( $attachment_id, sprintf( 'attachment %d deleted', $attachment_id ) )->urls( $files ) );
	}

	/**
	 * Filter `wp_update_attachment_metadata` (before the metadata is saved): image editor, size
	 * regeneration, upload processing. Remembers the file URLs of the metadata as it was before
	 * the request's first write; the end of the request compares them with the saved metadata
	 * (`attachment_files_changed()`), once however often it was written (WordPress writes it
	 * once per generated size) and with what the later filters made of it.
	 *
	 * @param mixed $data          New metadata (returned unchanged).
	 * @param int   $attachment_id Attachment id.
	 * @return mixed
	 */
	public function on_attachment_metadata( $data, $attachment_id = 0 ) {
		$attachment_id = (int) $attachment_id;
		if ( $attachment_id <= 0 || array_key_exists( $attachment_id, $this->media_before ) || 'attachment' !== get_post_type( $attachment_id ) ) {
			return $data;
		}
		$old = wp_get_attachment_metadata( $attachment_id );

		$this->media_before[ $attachment_id ] = $old ? Attachment_Files::urls( $attachment_id, $old ) : null;
		$this->queue->defer(
			function () use ( $attachment_id ) {
				$this->attachment_files_changed( $attachment_id );
			}
		);
		return $data;
	}

	/**
	 * End of a request that rewrote an attachment's metadata: purge the file URLs of the old and
	 * of the new metadata (with `IMAGE_EDIT_OVERWRITE` the names stay and the pixels change;
	 * without it, pages computing URLs from the metadata show the new names), the attachment page
	 * and the posts embedding it.
	 *
	 * @param int $attachment_id Attachment id.
	 */
	private function attachment_files_changed( $attachment_id ) {
		$before = $this->media_before[ $attachment_id ] ?? null;
		unset( $this->media_before[ $attachment_id ] );
		if ( 'attachment' !== get_post_type( $attachment_id ) ) {
			// Deleted later in the request: `on_attachment_deleted()` purged its pages and files
			// as they were then; the files it had before are left.
			if ( $before ) {
				$this->queue( ( new Invalidation() )->urls( $before )->reason( sprintf( 'attachment %d deleted', $attachment_id ) ) );
			}
			return;
		}
		if ( null === $before && isset( $this->new_attachments[ $attachment_id ] ) ) {
			// A new upload: created in this request, its sizes generated now under file names
			// WordPress just made unique. Nothing cached can show these files or the attachment;
			// purging would send a webhook per upload for nothing. (A repaired upload of an
			// older attachment is purged.)
			return;
		}
		$after = Attachment_Files::urls( $attachment_id, wp_get_attachment_metadata( $attachment_id ) );
		$this->queue( $this->attachment_shown( $attachment_id, sprintf( 'attachment %d files changed', $attachment_id ) )->urls( array_merge( (array) $before, $after ) ) );
	}

	/**
	 * Invalidation of what shows an attachment, hard (an alt text or caption correction may be a
	 * removal): its page, its REST item, and every page that rendered it, which carries its
	 * `e-N` key (image, gallery item, featured image, image block) — one key purge instead of a
	 * search through the posts.
	 *
	 * @param int    $attachment_id Attachment id.
	 * @param string $reason        Reason.
	 * @return Invalidation
	 */
	private function attachment_shown( $attachment_id, $reason ) {
		$s    = $this->scheme();
		$inv  = ( new Invalidation() )->tags( array( $s->post( $attachment_id ), $s->rest_post( $attachment_id ), $s->embedded( $attachment_id ) ) )->reason( $reason );
		$link = get_permalink( $attachment_id );
		if ( is_string( $link ) ) {
			$inv->urls( array( $link ) );
		}
		return $inv;
	}
}
