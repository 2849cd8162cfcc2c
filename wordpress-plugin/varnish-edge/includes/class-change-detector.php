<?php
/**
 * Snapshot-and-compare detection of post changes.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Takes a snapshot of a post the first time it is touched in a request, compares it with the
 * post at the end of the request, and turns the difference into exact invalidations.
 * Repeated saves of the same post in one request collapse into one comparison. Conservative:
 * any save of a published post invalidates its own pages and URL whatever the diff says (a field
 * the snapshot does not hold may have changed); the diff only decides how far it spreads. Post
 * meta written outside a save invalidates the post's own pages too, once per request.
 */
class Change_Detector {

	/**
	 * Post types that never render on their own and are handled elsewhere or ignored.
	 */
	const IGNORED_TYPES = array( 'revision', 'attachment', 'customize_changeset', 'oembed_cache', 'user_request', 'wp_font_face', 'wp_font_family' );

	/**
	 * Post types whose change affects every page that renders navigation menus.
	 */
	const MENU_TYPES = array( 'nav_menu_item', 'wp_navigation' );

	/**
	 * Post types that change the rendering of the whole site.
	 */
	const SITE_TYPES = array( 'wp_template', 'wp_template_part', 'wp_global_styles', 'custom_css' );

	/**
	 * Post meta written by WordPress itself that no page shows, and the view counters of popular
	 * plugins (written on every visit: purging on them would empty the cache of every visited
	 * post). Filterable: `varnish_edge_ignored_meta_keys`. A trailing `*` matches a prefix.
	 */
	const IGNORED_META = array( '_edit_lock', '_edit_last', '_wp_old_slug', '_wp_old_date', '_encloseme', '_pingme', '_trackbackme', '_wp_trash_meta_status', '_wp_trash_meta_time', '_wp_trash_meta_comments_status', '_wp_desired_post_slug', '_wp_check_lock', '_oembed_*', '_wp_suggested_privacy_policy_content', '_wp_attachment_backup_sizes', 'post_views_count', 'views' );

	/**
	 * Fields compared between snapshots.
	 */
	const FIELDS = array( 'modified', 'status', 'name', 'title', 'content', 'excerpt', 'date', 'author', 'parent', 'menu_order', 'terms', 'sticky', 'template', 'thumbnail', 'password', 'comment_status', 'url' );

	/** @var Settings */
	private $settings;

	/** @var array<int,array|null> Snapshots before the first change (null = did not exist). */
	private $before = array();

	/** @var array<int,bool> Posts deleted in this request. */
	private $deleted = array();

	/** @var array<int,array<string,bool>> Post meta keys added, updated or deleted in this request, per post. */
	private $meta_changed = array();

	/** @var array<int,bool> Posts snapshotted as their terms were being removed. */
	private $removing = array();

	/** @var bool Inside wp_insert_post() for a new post. */
	private $inserting_new = false;

	/**
	 * Constructor.
	 *
	 * @param Settings $settings Settings.
	 */
	public function __construct( Settings $settings ) {
		$this->settings = $settings;
	}

	/**
	 * Key scheme for the current site.
	 *
	 * @return Key_Scheme
	 */
	private function scheme() {
		return new Key_Scheme( $this->settings->key_namespace() );
	}

	/* ---------------------------------------------------------------- hooks */

	/**
	 * Filter `wp_insert_post_data`: remember that a new post is being inserted.
	 *
	 * @param array $data    Post data.
	 * @param array $postarr Raw data.
	 * @param array $raw     Unsanitized data.
	 * @param bool  $update  Update or insert.
	 * @return array
	 */
	public function on_insert_post_data( $data, $postarr = array(), $raw = array(), $update = false ) {
		if ( ! $update ) {
			$this->inserting_new = true;
		}
		return $data;
	}

	/**
	 * Action `pre_post_update`: snapshot before the row changes.
	 *
	 * @param int $post_id Post id.
	 */
	public function on_pre_post_update( $post_id ) {
		$this->remember( (int) $post_id );
	}

	/**
	 * Action `transition_post_status`: covers wp_publish_post() (scheduled go-live), which
	 * changes the status without pre_post_update.
	 *
	 * @param string   $new_status New status.
	 * @param string   $old_status Old status.
	 * @param \WP_Post $post       Post.
	 */
	public function on_transition_post_status( $new_status, $old_status, $post ) {
		$id = (int) $post->ID;
		if ( array_key_exists( $id, $this->before ) ) {
			return;
		}
		if ( 'new' === $old_status ) {
			$this->before[ $id ] = null;
			return;
		}
		$this->before[ $id ] = $this->snapshot( $post, array( 'status' => $old_status ) );
	}

	/**
	 * Action `wp_insert_post`: a new post without earlier hooks still gets compared.
	 *
	 * @param int      $post_id Post id.
	 * @param \WP_Post $post    Post.
	 * @param bool     $update  Update.
	 */
	public function on_insert_post( $post_id, $post, $update ) {
		if ( ! $update && ! array_key_exists( (int) $post_id, $this->before ) ) {
			$this->before[ (int) $post_id ] = null;
		}
		$this->inserting_new = false;
	}

	/**
	 * Action `set_object_terms`: term changes made outside a post update.
	 *
	 * @param int    $object_id  Object id.
	 * @param array  $terms      Terms.
	 * @param array  $tt_ids     New term taxonomy ids.
	 * @param string $taxonomy   Taxonomy.
	 * @param bool   $append     Append.
	 * @param array  $old_tt_ids Previous term taxonomy ids.
	 */
	public function on_set_object_terms( $object_id, $terms, $tt_ids, $taxonomy, $append, $old_tt_ids ) {
		$id = (int) $object_id;
		// A snapshot taken when wp_set_object_terms() removed the old terms already held the new
		// ones (they are added first): the old ones are rebuilt from $old_tt_ids below.
		if ( array_key_exists( $id, $this->before ) && ! isset( $this->removing[ $id ] ) ) {
			return;
		}
		unset( $this->removing[ $id ] );
		$post = get_post( $id );
		if ( ! $post || ! in_array( $taxonomy, get_object_taxonomies( $post->post_type ), true ) ) {
			return;
		}
		if ( $this->inserting_new ) {
			$this->before[ $id ] = null;
			return;
		}
		$snapshot = $this->snapshot( $post );
		if ( isset( $snapshot['terms'][ $taxonomy ] ) ) {
			$old = array();
			foreach ( (array) $old_tt_ids as $tt_id ) {
				$term = get_term_by( 'term_taxonomy_id', (int) $tt_id, $taxonomy );
				if ( $term ) {
					$old[] = (int) $term->term_id;
				}
			}
			sort( $old );
			$snapshot['terms'][ $taxonomy ] = $old;
		}
		$this->before[ $id ] = $snapshot;
	}

	/**
	 * Action `delete_term_relationships` (before the rows go): `wp_remove_object_terms()`, which
	 * `wp_delete_term()` calls for each post of a deleted tag, without `set_object_terms`.
	 *
	 * @param int    $object_id Object id.
	 * @param array  $tt_ids    Term taxonomy ids.
	 * @param string $taxonomy  Taxonomy.
	 */
	public function on_delete_term_relationships( $object_id, $tt_ids = array(), $taxonomy = '' ) {
		$post = get_post( (int) $object_id );
		if ( $post && in_array( (string) $taxonomy, get_object_taxonomies( $post->post_type ), true ) && ! array_key_exists( (int) $object_id, $this->before ) ) {
			$this->remember( (int) $object_id );
			$this->removing[ (int) $object_id ] = true;
		}
	}

	/**
	 * Action `update_option_sticky_posts`.
	 *
	 * @param mixed $old Old value.
	 * @param mixed $new New value.
	 */
	public function on_sticky_change( $old, $new ) {
		$old = array_map( 'intval', (array) $old );
		$new = array_map( 'intval', (array) $new );
		foreach ( array_merge( array_diff( $old, $new ), array_diff( $new, $old ) ) as $id ) {
			if ( array_key_exists( $id, $this->before ) ) {
				continue;
			}
			$post = get_post( $id );
			if ( $post ) {
				$this->before[ $id ] = $this->snapshot( $post, array( 'sticky' => in_array( $id, $old, true ) ) );
			}
		}
	}

	/**
	 * Filters `update_post_metadata` / `add_post_metadata` / `delete_post_metadata` (short-circuit
	 * filters, value passed through): snapshot before the page template or featured image changes.
	 *
	 * @param mixed  $check    Short-circuit value (returned unchanged).
	 * @param int    $post_id  Post id.
	 * @param string $meta_key Meta key.
	 * @return mixed
	 */
	public function on_meta_change( $check, $post_id, $meta_key ) {
		if ( in_array( $meta_key, array( '_wp_page_template', '_thumbnail_id' ), true ) && ! $this->inserting_new ) {
			$this->remember( (int) $post_id );
		}
		return $check;
	}

	/**
	 * Actions `added_post_meta` / `updated_post_meta` / `deleted_post_meta` (after the write):
	 * remember which keys of which post changed. At the end of the request a published post whose
	 * meta changed gets its own pages invalidated (once, however many keys changed), plus whatever
	 * `varnish_edge_meta_keys` maps the keys to, whether or not a save happened.
	 *
	 * @param int|int[] $meta_id   Meta id(s).
	 * @param int       $object_id Post id.
	 * @param string    $meta_key  Meta key.
	 */
	public function on_meta_written( $meta_id, $object_id, $meta_key ) {
		$object_id = (int) $object_id;
		$meta_key  = (string) $meta_key;
		if ( $object_id <= 0 || $this->is_ignored_meta( $meta_key ) ) {
			return;
		}
		$this->meta_changed[ $object_id ][ $meta_key ] = true;
	}

	/**
	 * Whether a meta key is internal to WordPress (never shown on a page).
	 *
	 * @param string $meta_key Meta key.
	 * @return bool
	 */
	public function is_ignored_meta( $meta_key ) {
		/**
		 * Post meta keys whose changes never invalidate anything (WordPress's bookkeeping).
		 * An entry ending in `*` matches every key starting with the rest.
		 *
		 * @param string[] $keys Ignored meta keys.
		 */
		foreach ( (array) apply_filters( 'varnish_edge_ignored_meta_keys', self::IGNORED_META ) as $ignored ) {
			$ignored = (string) $ignored;
			if ( $ignored === $meta_key || ( '*' === substr( $ignored, -1 ) && 0 === strpos( $meta_key, substr( $ignored, 0, -1 ) ) ) ) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Action `before_delete_post`.
	 *
	 * @param int $post_id Post id.
	 */
	public function on_before_delete( $post_id ) {
		$this->remember( (int) $post_id );
	}

	/**
	 * Action `deleted_post`.
	 *
	 * @param int $post_id Post id.
	 */
	public function on_deleted( $post_id ) {
		$this->deleted[ (int) $post_id ] = true;
	}

	/* ------------------------------------------------------------ snapshots */

	/**
	 * Snapshot a post once per request.
	 *
	 * @param int $post_id Post id.
	 */
	private function remember( $post_id ) {
		if ( array_key_exists( $post_id, $this->before ) ) {
			return;
		}
		$post = get_post( $post_id );
		if ( $post ) {
			$this->before[ $post_id ] = $this->snapshot( $post );
		}
	}

	/**
	 * Everything about a post that decides what pages show it, and how.
	 *
	 * @param \WP_Post $post      Post.
	 * @param array    $overrides Field overrides.
	 * @return array
	 */
	public function snapshot( \WP_Post $post, array $overrides = array() ) {
		$terms = array();
		foreach ( get_object_taxonomies( $post->post_type, 'objects' ) as $taxonomy ) {
			if ( ! $taxonomy->public && ! $taxonomy->publicly_queryable ) {
				continue;
			}
			$ids = wp_get_object_terms( $post->ID, $taxonomy->name, array( 'fields' => 'ids', 'update_term_meta_cache' => false ) );
			$ids = is_wp_error( $ids ) ? array() : array_map( 'intval', $ids );
			sort( $ids );
			$terms[ $taxonomy->name ] = $ids;
		}
		$state = array(
			'id'             => (int) $post->ID,
			'type'           => $post->post_type,
			'status'         => $post->post_status,
			'name'           => $post->post_name,
			'title'          => $post->post_title,
			'content'        => md5( (string) $post->post_content ),
			'excerpt'        => md5( (string) $post->post_excerpt ),
			'date'           => $post->post_date,
			'author'         => (int) $post->post_author,
			'parent'         => (int) $post->post_parent,
			'menu_order'     => (int) $post->menu_order,
			'terms'          => $terms,
			'sticky'         => is_sticky( $post->ID ),
			'template'       => (string) get_post_meta( $post->ID, '_wp_page_template', true ),
			'thumbnail'      => (int) get_post_meta( $post->ID, '_thumbnail_id', true ),
			'password'       => md5( (string) $post->post_password ),
			'comment_status' => $post->comment_status,
			'modified'       => $post->post_modified_gmt,
			// Raw text, not compared (the md5s are): tells a removal from an addition.
			'texts'          => array( (string) $post->post_title, (string) $post->post_content, (string) $post->post_excerpt ),
		);
		$state        = array_merge( $state, $overrides );
		$state['url'] = $this->public_url( $post, $state );
		return $state;
	}

	/**
	 * The URL the post has (or had) while published — never the `?p=N` form an unpublished
	 * post gets from get_permalink().
	 *
	 * @param \WP_Post $post  Post.
	 * @param array    $state Snapshot fields.
	 * @return string
	 */
	public function public_url( \WP_Post $post, array $state ) {
		if ( ! is_post_type_viewable( $post->post_type ) || in_array( $post->post_type, self::IGNORED_TYPES, true ) ) {
			return '';
		}
		$clone              = clone $post;
		$clone->post_status = 'publish';
		$clone->post_name   = (string) preg_replace( '/__trashed(-[0-9]+)?$/', '', (string) $state['name'] );
		$clone->post_date   = $state['date'];
		$clone->post_parent = $state['parent'];
		if ( '' === $clone->post_name && (bool) get_option( 'permalink_structure' ) ) {
			return '';
		}
		$url = get_permalink( $clone );
		return is_string( $url ) ? $url : '';
	}

	/* ------------------------------------------------------------ diffing */

	/**
	 * Whether any post was touched in this request.
	 *
	 * @return bool
	 */
	public function has_changes() {
		return array() !== $this->before || array() !== $this->meta_changed;
	}

	/**
	 * Invalidation for everything changed in this request; forgets the snapshots.
	 *
	 * @return Invalidation
	 */
	public function collect() {
		$inv = new Invalidation();
		foreach ( $this->before as $id => $before ) {
			$inv->merge( $this->invalidation_for_post( (int) $id, $before ) );
		}
		foreach ( $this->meta_changed as $id => $keys ) {
			$inv->merge( $this->invalidation_for_meta( (int) $id, array_keys( $keys ), array_key_exists( $id, $this->before ) ) );
		}
		$this->before       = array();
		$this->removing     = array();
		$this->deleted      = array();
		$this->meta_changed = array();
		return $inv;
	}

	/**
	 * Post meta changed on a post: its own pages when it is public (a save of it already
	 * covers them), and the keys other code maps the meta keys to, whatever the post's type or
	 * status (e.g. a product variation's stock shown on its parent product's page).
	 *
	 * @param int      $id        Post id.
	 * @param string[] $meta_keys Changed meta keys.
	 * @param bool     $was_saved The post was also saved (or deleted) in this request.
	 * @return Invalidation
	 */
	private function invalidation_for_meta( $id, array $meta_keys, $was_saved ) {
		$inv  = new Invalidation();
		$post = isset( $this->deleted[ $id ] ) ? null : get_post( $id );
		if ( ! $post || in_array( $post->post_type, array( 'revision', 'attachment' ), true ) ) {
			return $inv; // Attachments: Media_Changes; revisions never render.
		}
		$scheme = $this->scheme();
		$mapped = array();
		foreach ( $meta_keys as $meta_key ) {
			/**
			 * Keys (names without the namespace, e.g. `pl-42`, `shop`) of the pages that show a
			 * post meta value, beyond the post's own pages, which are always invalidated.
			 *
			 * @param string[] $keys     Keys.
			 * @param string   $meta_key Meta key that changed.
			 * @param int      $post_id  Post id.
			 */
			foreach ( (array) apply_filters( 'varnish_edge_meta_keys', array(), $meta_key, $id ) as $name ) {
				$mapped[] = $scheme->custom( (string) $name );
			}
		}
		if ( $mapped ) {
			$inv->tags( $mapped )->reason( sprintf( 'post %d meta changed (%s)', $id, implode( ', ', $meta_keys ) ) );
		}
		if ( ! $was_saved && 'publish' === $post->post_status && is_post_type_viewable( $post->post_type ) && ! in_array( $post->post_type, self::IGNORED_TYPES, true ) ) {
			$url = get_permalink( $post );
			$inv->tags( array( $scheme->post( $id ), $scheme->rest_post( $id ) ) )
				->urls( is_string( $url ) ? array( $url ) : array() )
				->reason( sprintf( 'post %d meta changed (%s)', $id, implode( ', ', $meta_keys ) ) );
		}
		return $inv;
	}

	/**
	 * Compare one post's snapshot with its current state.
	 *
	 * @param int        $id     Post id.
	 * @param array|null $before Snapshot or null.
	 * @return Invalidation
	 */
	private function invalidation_for_post( $id, $before ) {
		$post  = isset( $this->deleted[ $id ] ) ? null : get_post( $id );
		$after = $post ? $this->snapshot( $post ) : null;
		$type  = $before['type'] ?? ( $post ? $post->post_type : '' );
		$inv   = new Invalidation();

		if ( '' === $type || in_array( $type, self::IGNORED_TYPES, true ) ) {
			return $inv;
		}
		if ( is_post_type_viewable( $type ) && ! in_array( $type, self::MENU_TYPES, true ) ) {
			// Conservative: a save of a published post invalidates its own pages even when the
			// diff sees no change (a field it does not compare may have changed).
			return $this->invalidation_for( $before, $after );
		}
		if ( null !== $before && null !== $after && ! $this->changed_fields( $before, $after ) ) {
			return $inv;
		}
		$scheme = $this->scheme();
		if ( in_array( $type, self::MENU_TYPES, true ) ) {
			return $inv->tags( array( $scheme->listing( 'menus' ) ), true )->reason( sprintf( 'menu item %d changed', $id ) );
		}
		if ( in_array( $type, self::SITE_TYPES, true ) ) {
			return $inv->everything()->reason( sprintf( '%s %d changed', $type, $id ) );
		}
		if ( 'wp_block' === $type ) {
			// Pages rendering the block carry its embed key (Render_Keys::on_render_block).
			return $inv->tags( array( $scheme->embedded( $id ), $scheme->rest_post( $id ) ) )->reason( sprintf( 'reusable block %d changed', $id ) );
		}
		return $inv;
	}

	/**
	 * Fields that differ between two snapshots.
	 *
	 * @param array $before Before.
	 * @param array $after  After.
	 * @return string[]
	 */
	public function changed_fields( array $before, array $after ) {
		$changed = array();
		foreach ( self::FIELDS as $field ) {
			if ( ( $before[ $field ] ?? null ) !== ( $after[ $field ] ?? null ) ) {
				$changed[] = $field;
			}
		}
		return $changed;
	}

	/**
	 * The rules: what a change from $before to $after invalidates (either may be null).
	 *
	 * @param array|null $before State before (null: did not exist).
	 * @param array|null $after  State after (null: deleted).
	 * @return Invalidation
	 */
	public function invalidation_for( $before, $after ) {
		$inv    = new Invalidation();
		$scheme = $this->scheme();
		$was    = null !== $before && $this->is_public( $before );
		$is     = null !== $after && $this->is_public( $after );
		if ( ! $was && ! $is ) {
			return $inv;
		}
		$id   = (int) ( $after['id'] ?? $before['id'] );
		$type = $after['type'] ?? $before['type'];
		$own  = array( $scheme->post( $id ), $scheme->rest_post( $id ) );

		if ( ! $was || ! $is || ( $before['modified'] ?? null ) !== ( $after['modified'] ?? null ) ) {
			// An empty feed prints the time a public post was last modified (Query_Keys).
			$inv->tags( array( $scheme->listing( 'lastmod' ) ), true );
		}
		if ( $was && $is ) {
			$changed = $this->changed_fields( $before, $after );
			// Whatever the diff says, the post's own pages and URL are invalidated: meta, blocks
			// rendered from other data, or fields the snapshot does not hold may have changed.
			$inv->tags( $own )->urls( array( $after['url'] ) )->tags( array( $scheme->post_feed( $id ) ), true );
			if ( ! array_diff( $changed, array( 'modified' ) ) ) {
				// The diff sees nothing visible (e.g. the block editor's second save): it spreads
				// no further than the post itself and feeds (they print the modified time).
				return $inv->reason( sprintf( 'post %d saved', $id ) );
			}
			$inv->reason( sprintf( 'post %d updated (%s)', $id, implode( ', ', array_diff( $changed, array( 'modified' ) ) ) ) );
			$has = static function ( array $fields ) use ( $changed ) {
				return (bool) array_intersect( $fields, $changed );
			};
			// A removal (text taken out, a password set, the featured image replaced) must not be
			// served once more from grace, anywhere: listings and feeds are hard-purged too.
			$removal = $this->is_removal( $before, $after, $changed );
			$spread  = ! $removal; // Soft unless something was removed.
			// REST collections filtered or ordered by content may gain, lose or reorder it.
			$inv->tags( array( $scheme->rest_query( Rest_Bases::of_type( $type ) ) ), $spread );
			if ( $removal ) {
				$inv->reason( sprintf( 'post %d: content removed', $id ) )->tags( array( $scheme->post_feed( $id ) ) );
			}
			if ( $has( array( 'title', 'content', 'excerpt', 'thumbnail', 'date', 'password', 'name', 'parent', 'comment_status' ) ) ) {
				$inv->tags( array( $scheme->post_listed( $id ) ), $spread );
			}
			if ( $has( array( 'author' ) ) ) {
				$inv->tags( array( $scheme->post_author( $id ) ), true );
			}
			if ( $has( array( 'terms' ) ) ) {
				$inv->tags( array( $scheme->post_terms( $id ) ), true );
			}
			if ( $has( array( 'title', 'name', 'date', 'parent', 'password' ) ) ) {
				$inv->tags( array( $scheme->post_linked( $id ) ), $spread );
			}
			if ( $before['url'] !== $after['url'] && '' !== $before['url'] ) {
				$inv->urls( array( $before['url'] ) )->tags( array( $scheme->listing( 'sitemaps' ) ), true );
				if ( is_post_type_hierarchical( $type ) ) {
					$inv->prefixes( array( $before['url'] ) ); // Child pages lived under the old URL.
				}
			}
			if ( $has( array( 'title', 'content', 'excerpt' ) ) ) {
				$inv->tags( array( $scheme->listing( 'search' ) ), $spread );
			}
			if ( $has( array( 'terms' ) ) ) {
				foreach ( array_unique( array_merge( array_keys( $before['terms'] ), array_keys( $after['terms'] ) ) ) as $tax ) {
					$old = $before['terms'][ $tax ] ?? array();
					$new = $after['terms'][ $tax ] ?? array();
					// The post leaves the archives of removed terms: hard, it must not show there
					// again; it enters the others: soft.
					foreach ( array( array( array_diff( $old, $new ), false ), array( array_diff( $new, $old ), true ) ) as list( $term_ids, $soft ) ) {
						foreach ( $term_ids as $term_id ) {
							$inv->tags( array( $scheme->term_listing( $term_id ), $scheme->rest_term( $term_id ) ), $soft ); // r-t: its post count changes.
						}
					}
					$inv->tags( array( $scheme->rest_query( Rest_Bases::of_taxonomy( $tax ) ) ), true ); // Counts: hide_empty, orderby=count.
				}
			}
			if ( $has( array( 'author' ) ) ) {
				$inv->tags( array( $scheme->author_listing( $before['author'] ), $scheme->author_listing( $after['author'] ) ), true );
				$inv->tags( $this->users_list_keys( array( $before['author'], $after['author'] ) ), true );
			}
			if ( $has( array( 'date' ) ) ) {
				// Position in every listing and the date archives change.
				$inv->tags( array_merge( $this->listing_keys( $before ), $this->listing_keys( $after ), $this->neighbor_keys( $before ), $this->neighbor_keys( $after ) ), true );
			}
			if ( $has( array( 'sticky' ) ) && $this->is_listed_type( $type ) ) {
				$inv->tags( array( $scheme->listing( 'home' ), $scheme->rest_collection( Rest_Bases::of_type( $type ) ) ), true );
			}
			if ( 'page' === $type && $has( array( 'title', 'name', 'parent', 'menu_order' ) ) ) {
				$inv->tags( array( $scheme->listing( 'pages' ) ), true );
			}
			return $inv;
		}

		if ( $is ) {
			// Published (new, from draft, or a scheduled post going live).
			$inv->reason( sprintf( 'post %d published', $id ) );
			$inv->tags( $this->users_list_keys( array( $after['author'] ) ), true );
			$inv->tags( $own )->urls( array( $after['url'] ) ); // Drops a 404 cached at the new URL.
			$inv->tags( array_merge( $this->listing_keys( $after ), $this->neighbor_keys( $after ) ), true );
			return $inv;
		}

		// Unpublished, trashed or deleted: every page that shows it, and the URL it had.
		$inv->reason( sprintf( 'post %d %s', $id, null === $after ? 'deleted' : ( 'trash' === $after['status'] ? 'trashed' : 'unpublished' ) ) );
		$inv->tags( array_merge( $own, array( $scheme->post_listed( $id ), $scheme->post_linked( $id ), $scheme->post_feed( $id ), $scheme->post_author( $id ), $scheme->post_terms( $id ), $scheme->comments( $id ) ) ) );
		$inv->urls( array( $before['url'] ) );
		$inv->tags( array_merge( $this->listing_keys( $before ), $this->neighbor_keys( $before ) ) );
		$inv->tags( $this->users_list_keys( array( $before['author'] ) ) );
		return $inv;
	}

	/**
	 * The REST users list shows the authors of public posts: an author with at most one public
	 * post now (their first just published, or their last just gone) joined or left it.
	 *
	 * @param array $authors User ids.
	 * @return string[]
	 */
	private function users_list_keys( array $authors ): array {
		$types = array_values( get_post_types( array( 'show_in_rest' => true ) ) );
		foreach ( array_unique( array_map( 'intval', $authors ) ) as $author ) {
			if ( $author > 0 && (int) count_user_posts( $author, $types, true ) <= 1 ) {
				return array( $this->scheme()->rest_collection( 'users' ) );
			}
		}
		return array();
	}

	/**
	 * Whether an update removed something visitors could see: a word of the title, content or
	 * excerpt that is gone (an edited word counts as removed), a password set or changed, a
	 * featured image replaced or removed.
	 *
	 * @param array    $before  Before.
	 * @param array    $after   After.
	 * @param string[] $changed Changed fields.
	 * @return bool
	 */
	public function is_removal( array $before, array $after, array $changed ) {
		if ( in_array( 'password', $changed, true ) && md5( '' ) !== $after['password'] ) {
			return true;
		}
		if ( in_array( 'thumbnail', $changed, true ) && $before['thumbnail'] ) {
			return true;
		}
		foreach ( (array) ( $before['texts'] ?? array() ) as $i => $old ) {
			$new = (string) ( $after['texts'][ $i ] ?? '' );
			if ( $old === $new ) {
				continue;
			}
			$left = array_count_values( self::tokens( $new ) );
			foreach ( array_count_values( self::tokens( (string) $old ) ) as $token => $count ) {
				if ( ( $left[ $token ] ?? 0 ) < $count ) {
					return true;
				}
			}
		}
		return false;
	}

	/**
	 * Words and markup pieces of a text.
	 *
	 * @param string $text Text.
	 * @return string[]
	 */
	private static function tokens( $text ) {
		return array_map( 'strval', (array) preg_split( '/[\s<>"\'=\/]+/u', $text, -1, PREG_SPLIT_NO_EMPTY ) );
	}

	/**
	 * Whether a snapshot is visible to anonymous visitors.
	 *
	 * @param array $state Snapshot.
	 * @return bool
	 */
	private function is_public( array $state ) {
		return 'publish' === $state['status'] && is_post_type_viewable( $state['type'] ) && ! in_array( $state['type'], self::IGNORED_TYPES, true );
	}

	/**
	 * Post types shown in the home, author and date listings.
	 *
	 * @param string $type Post type.
	 * @return bool
	 */
	private function is_listed_type( $type ) {
		return in_array( $type, (array) apply_filters( 'varnish_edge_listed_post_types', array( 'post' ) ), true );
	}


	/**
	 * Keys of every listing a post in this state belongs to.
	 *
	 * @param array $state Snapshot.
	 * @return string[]
	 */
	public function listing_keys( array $state ) {
		$scheme = $this->scheme();
		$type   = $state['type'];
		$base   = Rest_Bases::of_type( $type );
		$keys   = array_merge( array( $scheme->listing( 'search' ), $scheme->listing( 'sitemaps' ) ), $scheme->rest_lists( $base ) );
		foreach ( $state['terms'] as $tax => $ids ) {
			foreach ( $ids as $term_id ) {
				$keys[] = $scheme->term_listing( $term_id );
				$keys[] = $scheme->rest_term( $term_id ); // Its post count changes.
			}
			if ( $ids ) {
				$keys[] = $scheme->rest_query( Rest_Bases::of_taxonomy( (string) $tax ) );
			}
		}
		// The type's archive and every query loop listing the type (Render_Keys), archive or not.
		$keys[] = $scheme->post_type_archive( $type );
		if ( $this->is_listed_type( $type ) ) {
			$time   = strtotime( $state['date'] );
			$keys[] = $scheme->listing( 'home' );
			$keys[] = $scheme->author_listing( $state['author'] );
			$keys[] = $scheme->date( gmdate( 'Y', $time ) );
			$keys[] = $scheme->date( gmdate( 'Ym', $time ) );
			$keys[] = $scheme->date( gmdate( 'Ymd', $time ) );
		}
		if ( 'page' === $type ) {
			$keys[] = $scheme->listing( 'pages' );
		}
		return $keys;
	}

	/**
	 * Neighbour-link keys of the published posts just before and after this one (pages that show
	 * previous/next links to it).
	 *
	 * @param array $state Snapshot.
	 * @return string[]
	 */
	public function neighbor_keys( array $state ) {
		global $wpdb;
		$keys = array();
		foreach ( array( '<' => 'DESC', '>' => 'ASC' ) as $op => $order ) {
			$id = $wpdb->get_var( $wpdb->prepare( "SELECT ID FROM {$wpdb->posts} WHERE post_type = %s AND post_status = 'publish' AND ID <> %d AND post_date {$op} %s ORDER BY post_date {$order}, ID {$order} LIMIT 1", $state['type'], $state['id'], $state['date'] ) );
			if ( $id ) {
				$keys[] = $this->scheme()->neighbors( (int) $id );
			}
		}
		return $keys;
	}
}
