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

	/**
	 * Constructor.
	 *
	 * @param Settings        $settings Settings.
	 * @param Event_Queue     $queue    Queue.
	 * @param Change_Detector $detector Post rules (embedding lookups).
	 */
	public function __construct( Settings $settings, Event_Queue $queue, Change_Detector $detector ) {
		$this->settings = $settings;
		$this->queue    = $queue;
		$this->detector = $detector;
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
		if ( '1' === (string) $comment->comment_approved ) {
			$this->comments_changed( (int) $comment->comment_post_ID, sprintf( 'comment %d added', $id ), true );
		}
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
			if ( $old_rest != $new_rest ) { // phpcs:ignore Universal.Operators.StrictComparisons.LooseNotEqual
				$this->site_changed( 'theme settings changed' );
			} elseif ( $old_locations != $new_locations ) { // phpcs:ignore Universal.Operators.StrictComparisons.LooseNotEqual
				$this->menus_changed();
			}
		}
	}

	/* ---------------------------------------------------------------- users */

	/**
	 * Filter `wp_pre_insert_user_data`: snapshot the public profile before an update.
	 *
	 * @param array $data     User data.
	 * @param bool  $update   Update.
	 * @param int   $user_id  User id.
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
		$this->queue( $this->attachment_shown( $attachment_id, $this->posts_embedding_attachment( $attachment_id ), sprintf( 'attachment %d changed', $attachment_id ) ) );
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
		$this->queue( $this->attachment_shown( $attachment_id, $this->posts_embedding_attachment( $attachment_id ), sprintf( 'attachment %d deleted', $attachment_id ) )->urls( $files ) );
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
		$ids = $this->posts_embedding_attachment( $attachment_id );
		if ( null === $before && ! $ids ) {
			// A new upload: the attachment had no metadata when the request started, so its sizes
			// are being generated now, under file names WordPress just made unique, and no post
			// shows it yet. Nothing cached can show these files; purging would send a webhook per
			// upload for nothing. (A repaired upload that a post already embeds is purged.)
			return;
		}
		$after = Attachment_Files::urls( $attachment_id, wp_get_attachment_metadata( $attachment_id ) );
		$this->queue( $this->attachment_shown( $attachment_id, $ids, sprintf( 'attachment %d files changed', $attachment_id ) )->urls( array_merge( (array) $before, $after ) ) );
	}

	/**
	 * Invalidation of what shows an attachment: its page, its REST item and the posts embedding it.
	 *
	 * @param int    $attachment_id Attachment id.
	 * @param int[]  $ids           Posts embedding it.
	 * @param string $reason        Reason.
	 * @return Invalidation
	 */
	private function attachment_shown( $attachment_id, array $ids, $reason ) {
		$s    = $this->scheme();
		$inv  = ( new Invalidation() )->tags( array( $s->post( $attachment_id ), $s->rest_post( $attachment_id ) ) );
		$link = get_permalink( $attachment_id );
		if ( is_string( $link ) ) {
			$inv->urls( array( $link ) );
		}
		return $this->detector->posts_embedding( $inv, $ids, $reason );
	}

	/**
	 * Published posts that embed an attachment: featured image, `wp-image-N` class, block ids, or
	 * its file name (any size, scaled, rotated or edited copy: the stem of the uploaded name).
	 *
	 * @param int $attachment_id Attachment id.
	 * @return int[]
	 */
	private function posts_embedding_attachment( $attachment_id ) {
		global $wpdb;
		$ids  = array_map( 'intval', $wpdb->get_col( $wpdb->prepare( "SELECT post_id FROM {$wpdb->postmeta} WHERE meta_key = '_thumbnail_id' AND meta_value = %s", (string) $attachment_id ) ) );
		$ids  = array_merge( $ids, $this->detector->posts_containing( 'wp-image-' . $attachment_id . '"' ), $this->detector->posts_containing( '"id":' . $attachment_id . ',' ), $this->detector->posts_containing( '"id":' . $attachment_id . '}' ) );
		$file = get_post_meta( $attachment_id, '_wp_attached_file', true );
		$stem = is_string( $file ) ? preg_replace( '/(-scaled|-rotated|-e\d{13})*\.[^.\/]+$/', '', $file ) : '';
		if ( is_string( $stem ) && '' !== wp_basename( $stem ) ) {
			$ids = array_merge( $ids, $this->detector->posts_containing( $stem ) );
		}
		return array_values( array_unique( $ids ) );
	}
}
