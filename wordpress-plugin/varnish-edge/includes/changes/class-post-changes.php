<?php
/**
 * Invalidations for post changes.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Takes a snapshot of a post the first time it is touched in a request and, at the end of the
 * request, pushes what `Post_Change_Policy` makes of the snapshot and the post as it is then.
 * Repeated saves of the same post in one request collapse into one comparison. Post meta written
 * outside a save invalidates the post's own pages too, once per request.
 */
class Post_Changes extends Change_Handler {

	/**
	 * Post meta written by WordPress itself that no page shows, and the view counters of popular
	 * plugins (written on every visit: purging on them would empty the cache of every visited
	 * post). Filterable: `varnish_edge_ignored_meta_keys`. A trailing `*` matches a prefix.
	 */
	const IGNORED_META = array( '_edit_lock', '_edit_last', '_wp_old_slug', '_wp_old_date', '_encloseme', '_pingme', '_trackbackme', '_wp_trash_meta_status', '_wp_trash_meta_time', '_wp_trash_meta_comments_status', '_wp_desired_post_slug', '_wp_check_lock', '_oembed_*', '_wp_suggested_privacy_policy_content', '_wp_attachment_backup_sizes', 'post_views_count', 'views' );

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

	/** @var bool The end-of-request comparison is already deferred on the queue. */
	private $deferred = false;

	/**
	 * Hook into WordPress: early (priority 1) where a snapshot must be taken before others write.
	 */
	public function register(): void {
		add_filter( 'wp_insert_post_data', array( $this, 'on_insert_post_data' ), 10, 4 );
		add_action( 'pre_post_update', array( $this, 'on_pre_post_update' ), 1, 1 );
		add_action( 'transition_post_status', array( $this, 'on_transition_post_status' ), 1, 3 );
		add_action( 'wp_insert_post', array( $this, 'on_insert_post' ), 1, 3 );
		add_action( 'set_object_terms', array( $this, 'on_set_object_terms' ), 1, 6 );
		add_action( 'delete_term_relationships', array( $this, 'on_delete_term_relationships' ), 1, 3 );
		add_action( 'update_option_sticky_posts', array( $this, 'on_sticky_change' ), 1, 2 );
		add_action( 'add_option_sticky_posts', array( $this, 'on_sticky_change' ), 1, 2 );
		foreach ( array( 'update', 'add', 'delete' ) as $op ) {
			add_filter( "{$op}_post_metadata", array( $this, 'on_meta_change' ), 1, 3 );
		}
		foreach ( array( 'added', 'updated', 'deleted' ) as $op ) {
			add_action( "{$op}_post_meta", array( $this, 'on_meta_written' ), 10, 3 );
		}
		add_action( 'before_delete_post', array( $this, 'on_before_delete' ), 1, 1 );
		add_action( 'deleted_post', array( $this, 'on_deleted' ), 1, 1 );
	}

	/* ---------------------------------------------------------------- hooks */

	/**
	 * Filter `wp_insert_post_data`: remember that a new post is being inserted.
	 *
	 * @param array<string,mixed> $data    Post data (returned unchanged).
	 * @param array<string,mixed> $postarr Raw data.
	 * @param array<string,mixed> $raw     Unsanitized data.
	 * @param bool                $update  Update (true) or insert.
	 * @return array<string,mixed>
	 */
	public function on_insert_post_data( array $data, array $postarr = array(), array $raw = array(), bool $update = false ): array {
		if ( ! $update ) {
			$this->inserting_new = true;
		}
		return $data;
	}

	/**
	 * Action `pre_post_update`: snapshot before the row changes.
	 */
	public function on_pre_post_update( int $post_id ): void {
		$this->remember( $post_id );
	}

	/**
	 * Action `transition_post_status`: covers wp_publish_post() (scheduled go-live), which
	 * changes the status without pre_post_update.
	 */
	public function on_transition_post_status( string $new_status, string $old_status, \WP_Post $post ): void {
		$id = (int) $post->ID;
		if ( array_key_exists( $id, $this->before ) ) {
			return;
		}
		$this->before[ $id ] = 'new' === $old_status ? null : Post_Snapshot::of( $post, array( 'status' => $old_status ) );
		$this->defer_comparison();
	}

	/**
	 * Action `wp_insert_post`: a new post without earlier hooks still gets compared.
	 */
	public function on_insert_post( int $post_id, \WP_Post $post, bool $update ): void {
		if ( ! $update && ! array_key_exists( $post_id, $this->before ) ) {
			$this->before[ $post_id ] = null;
			$this->defer_comparison();
		}
		$this->inserting_new = false;
	}

	/**
	 * Action `set_object_terms`: term changes made outside a post update.
	 *
	 * @param int    $object_id  Object id.
	 * @param mixed  $terms      Terms as given to wp_set_object_terms().
	 * @param array  $tt_ids     New term taxonomy ids.
	 * @param string $taxonomy   Taxonomy.
	 * @param bool   $append     Whether the terms were appended.
	 * @param array  $old_tt_ids Term taxonomy ids before.
	 */
	public function on_set_object_terms( int $object_id, mixed $terms, array $tt_ids, string $taxonomy, bool $append, array $old_tt_ids ): void {
		$id = $object_id;
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
		$this->defer_comparison();
		if ( $this->inserting_new ) {
			$this->before[ $id ] = null;
			return;
		}
		$snapshot = Post_Snapshot::of( $post );
		if ( isset( $snapshot['terms'][ $taxonomy ] ) ) {
			$old = array();
			foreach ( $old_tt_ids as $tt_id ) {
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
	public function on_delete_term_relationships( int $object_id, array $tt_ids = array(), string $taxonomy = '' ): void {
		$post = get_post( $object_id );
		if ( $post && in_array( $taxonomy, get_object_taxonomies( $post->post_type ), true ) && ! array_key_exists( $object_id, $this->before ) ) {
			$this->remember( $object_id );
			$this->removing[ $object_id ] = true;
		}
	}

	/**
	 * Actions `update_option_sticky_posts` (old and new value) and `add_option_sticky_posts`
	 * (option name and value: no post was sticky before).
	 *
	 * @param mixed $old Old value.
	 * @param mixed $new New value.
	 */
	public function on_sticky_change( mixed $old, mixed $new ): void {
		$old = array_map( 'intval', (array) $old );
		$new = array_map( 'intval', (array) $new );
		foreach ( array_merge( array_diff( $old, $new ), array_diff( $new, $old ) ) as $id ) {
			if ( array_key_exists( $id, $this->before ) ) {
				continue;
			}
			$post = get_post( $id );
			if ( $post ) {
				$this->before[ $id ] = Post_Snapshot::of( $post, array( 'sticky' => in_array( $id, $old, true ) ) );
				$this->defer_comparison();
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
	 */
	public function on_meta_change( mixed $check, int $post_id, string $meta_key ): mixed {
		if ( in_array( $meta_key, array( '_wp_page_template', '_thumbnail_id' ), true ) && ! $this->inserting_new ) {
			$this->remember( $post_id );
		}
		return $check;
	}

	/**
	 * Actions `added_post_meta` / `updated_post_meta` / `deleted_post_meta` (after the write):
	 * remember which keys of which post changed. At the end of the request a published post whose
	 * meta changed gets its own pages invalidated (once, however many keys changed), plus whatever
	 * `varnish_edge_meta_keys` maps the keys to, whether or not a save happened.
	 *
	 * @param int|int[] $meta_id   Meta id (several when deleted).
	 * @param int       $object_id Post id.
	 * @param string    $meta_key  Meta key.
	 */
	public function on_meta_written( int|array $meta_id, int $object_id, string $meta_key ): void {
		if ( $object_id <= 0 || $this->is_ignored_meta( $meta_key ) ) {
			return;
		}
		$this->meta_changed[ $object_id ][ $meta_key ] = true;
		$this->defer_comparison();
	}

	/**
	 * Action `before_delete_post`.
	 */
	public function on_before_delete( int $post_id ): void {
		$this->remember( $post_id );
	}

	/**
	 * Action `deleted_post`.
	 */
	public function on_deleted( int $post_id ): void {
		$this->deleted[ $post_id ] = true;
		$this->defer_comparison();
	}

	/* ------------------------------------------------------------ snapshots */

	/**
	 * Snapshot a post once per request.
	 */
	private function remember( int $post_id ): void {
		if ( array_key_exists( $post_id, $this->before ) ) {
			return;
		}
		$post = get_post( $post_id );
		if ( $post ) {
			$this->before[ $post_id ] = Post_Snapshot::of( $post );
			$this->defer_comparison();
		}
	}

	/**
	 * Whether a meta key is internal to WordPress (never shown on a page).
	 */
	private function is_ignored_meta( string $meta_key ): bool {
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

	/* ------------------------------------------------- end of the request */

	/**
	 * The first change of the request: compare at its end, once.
	 */
	private function defer_comparison(): void {
		if ( $this->deferred ) {
			return;
		}
		$this->deferred = true;
		$this->queue->defer(
			function (): void {
				$this->push_changes();
			}
		);
	}

	/**
	 * Push the invalidation of everything changed in this request; forget the snapshots.
	 */
	private function push_changes(): void {
		$policy = new Post_Change_Policy( $this->scheme(), new Live_Post_Facts() );
		$inv    = new Invalidation();
		$pairs  = array();
		foreach ( $this->before as $id => $before ) {
			$post    = isset( $this->deleted[ $id ] ) ? null : get_post( $id );
			$after   = $post ? Post_Snapshot::of( $post ) : null;
			$type    = $before['type'] ?? ( $post ? $post->post_type : '' );
			$pairs[] = array( $before, $after );
			$inv->merge( $policy->post_changed( (int) $id, (string) $type, $before, $after ) );
		}
		$inv->merge( $policy->authors_changed( $pairs ) );
		foreach ( $this->meta_changed as $id => $keys ) {
			$inv->merge( $this->meta_invalidation( (int) $id, array_map( 'strval', array_keys( $keys ) ), array_key_exists( $id, $this->before ) ) );
		}
		$this->before       = array();
		$this->removing     = array();
		$this->deleted      = array();
		$this->meta_changed = array();
		$this->deferred     = false;
		$this->queue( $inv );
	}

	/**
	 * Post meta changed on a post: its own pages when it is public (a save of it already
	 * covers them), and the keys other code maps the meta keys to, whatever the post's type or
	 * status (e.g. a product variation's stock shown on its parent product's page).
	 *
	 * @param int      $id        Post id.
	 * @param string[] $meta_keys Changed meta keys.
	 * @param bool     $was_saved The post was also saved (or deleted) in this request.
	 */
	private function meta_invalidation( int $id, array $meta_keys, bool $was_saved ): Invalidation {
		$inv  = new Invalidation();
		$post = isset( $this->deleted[ $id ] ) ? null : get_post( $id );
		if ( ! $post || in_array( $post->post_type, array( 'revision', 'attachment' ), true ) ) {
			return $inv; // Attachments: Media_Changes; revisions never render.
		}
		$scheme = $this->scheme();
		$reason = sprintf( 'post %d meta changed (%s)', $id, implode( ', ', $meta_keys ) );
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
			$inv->tags( $mapped )->reason( $reason );
		}
		if ( ! $was_saved && 'publish' === $post->post_status && is_post_type_viewable( $post->post_type ) && ! in_array( $post->post_type, Post_Change_Policy::IGNORED_TYPES, true ) ) {
			$url = get_permalink( $post );
			$inv->tags( array( $scheme->post( $id ), $scheme->rest_post( $id ) ) )
				->urls( is_string( $url ) ? array( $url ) : array() )
				->refresh( is_string( $url ) ? array( $url ) : array() )
				->reason( $reason );
		}
		return $inv;
	}
}
