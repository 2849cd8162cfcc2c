<?php
/**
 * Invalidations for term changes.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Terms created, edited or deleted: their archives, the pages showing them, their REST items and
 * collections; terms whose post count changed (`Term_Count_Policy`). Terms of `nav_menu` are
 * menus (handed to `Site_Changes`).
 */
class Term_Changes extends Change_Handler {

	/** @var array<int,array> Term snapshots before edit/delete. */
	private $terms_before = array();

	/**
	 * Counts before the request's first recount of each term, by term taxonomy id.
	 *
	 * @var array<int,array{term_id:int,taxonomy:string,count:int}>
	 */
	private $counts_before = array();

	/**
	 * Constructor.
	 *
	 * @param Settings     $settings Settings.
	 * @param Event_Queue  $queue    The request's queue.
	 * @param Site_Changes $site     Menu invalidation.
	 */
	public function __construct( Settings $settings, Event_Queue $queue, private Site_Changes $site ) {
		parent::__construct( $settings, $queue );
	}

	/**
	 * Hook into WordPress.
	 */
	public function register(): void {
		add_action( 'edit_terms', array( $this, 'on_term_before' ), 10, 2 );
		add_action( 'pre_delete_term', array( $this, 'on_term_before' ), 10, 2 );
		add_action( 'created_term', array( $this, 'on_term_created' ), 10, 3 );
		add_action( 'edited_term', array( $this, 'on_term_edited' ), 10, 3 );
		add_action( 'delete_term', array( $this, 'on_term_deleted' ), 10, 3 );
		// Every recount (`_update_post_term_count`, `_update_generic_term_count`, and term edits)
		// runs between these two, per term: the count is read before the first one.
		add_action( 'edit_term_taxonomy', array( $this, 'on_count_before' ), 1, 2 );
	}

	/**
	 * Action `edit_term_taxonomy`: remember the term's count before the request first writes it;
	 * the counts are compared once, at the end of the request.
	 *
	 * @param int    $tt_id    Term taxonomy id.
	 * @param string $taxonomy Taxonomy.
	 */
	public function on_count_before( mixed $tt_id, mixed $taxonomy = '' ): void {
		$tt_id = (int) $tt_id;
		if ( isset( $this->counts_before[ $tt_id ] ) || ! self::shows_counts( (string) $taxonomy ) ) {
			return;
		}
		global $wpdb;
		$row = $wpdb->get_row( $wpdb->prepare( "SELECT term_id, count FROM {$wpdb->term_taxonomy} WHERE term_taxonomy_id = %d", $tt_id ) );
		if ( ! $row ) {
			return;
		}
		if ( array() === $this->counts_before ) {
			$this->queue->defer( array( $this, 'push_count_changes' ) );
		}
		$this->counts_before[ $tt_id ] = array(
			'term_id'  => (int) $row->term_id,
			'taxonomy' => (string) $taxonomy,
			'count'    => (int) $row->count,
		);
	}

	/**
	 * Whether a taxonomy's counts show anywhere public: on its terms' pages or in the REST API.
	 */
	private static function shows_counts( string $taxonomy ): bool {
		return 'nav_menu' !== $taxonomy && taxonomy_exists( $taxonomy ) && ( is_taxonomy_viewable( $taxonomy ) || (bool) get_taxonomy( $taxonomy )->show_in_rest );
	}

	/**
	 * End of the request: the counts now, in one query per thousand terms, against those before.
	 */
	public function push_count_changes(): void {
		global $wpdb;
		$before              = $this->counts_before;
		$this->counts_before = array();
		$now                 = array();
		foreach ( array_chunk( array_keys( $before ), 1000 ) as $ids ) {
			$in = implode( ',', array_map( 'intval', $ids ) );
			foreach ( (array) $wpdb->get_results( "SELECT term_taxonomy_id, count FROM {$wpdb->term_taxonomy} WHERE term_taxonomy_id IN ({$in})" ) as $row ) {
				$now[ (int) $row->term_taxonomy_id ] = (int) $row->count;
			}
		}
		$changes = array();
		foreach ( $before as $tt_id => $term ) {
			$changes[] = array(
				'term_id'  => $term['term_id'],
				'taxonomy' => $term['taxonomy'],
				'base'     => Rest_Bases::of_taxonomy( $term['taxonomy'] ),
				'before'   => $term['count'],
				'after'    => $now[ $tt_id ] ?? 0, // Deleted since.
			);
		}
		$this->queue( Term_Count_Policy::invalidation( $this->scheme(), $changes ) );
	}

	/**
	 * Snapshot of a term's public URL.
	 *
	 * @return array{taxonomy: string, link: string}
	 */
	private function term_state( int $term_id, string $taxonomy ): array {
		$link = is_taxonomy_viewable( $taxonomy ) ? get_term_link( $term_id, $taxonomy ) : '';
		return array(
			'taxonomy' => $taxonomy,
			'link'     => is_string( $link ) ? $link : '',
		);
	}

	/**
	 * Action `edit_terms` / `pre_delete_term`: remember the URL before it changes.
	 */
	public function on_term_before( int $term_id, string $taxonomy ): void {
		if ( ! isset( $this->terms_before[ $term_id ] ) ) {
			$this->terms_before[ $term_id ] = $this->term_state( $term_id, $taxonomy );
		}
	}

	/**
	 * Action `created_term`.
	 */
	public function on_term_created( int $term_id, int $tt_id, string $taxonomy ): void {
		if ( ! $this->is_content_term_change( $taxonomy ) ) {
			return;
		}
		$link = get_term_link( $term_id, $taxonomy );
		$this->queue(
			( new Invalidation() )
				->tags( $this->scheme()->rest_lists( Rest_Bases::of_taxonomy( $taxonomy ) ), true )
				->tags( array( $this->scheme()->term_list( $taxonomy ) ), true ) // Lists showing empty terms.
				->prefixes( is_string( $link ) ? array( $link ) : array() ) // Its archive's cached 404 and empty feed.
				->reason( sprintf( 'term %d created', $term_id ) )
		);
	}

	/**
	 * Routes a term change: menus (terms of `nav_menu`) go to the menu invalidation; terms of
	 * taxonomies that never show on public pages need nothing.
	 *
	 * @return bool Whether the change is one of a public content taxonomy, to handle as such.
	 */
	private function is_content_term_change( string $taxonomy ): bool {
		if ( 'nav_menu' === $taxonomy ) {
			$this->site->menus_changed();
			return false;
		}
		return is_taxonomy_viewable( $taxonomy );
	}

	/**
	 * Action `edited_term`.
	 */
	public function on_term_edited( int $term_id, int $tt_id, string $taxonomy ): void {
		if ( ! $this->is_content_term_change( $taxonomy ) ) {
			return;
		}
		$s      = $this->scheme();
		$before = $this->terms_before[ $term_id ] ?? array( 'link' => '' );
		$after  = $this->term_state( $term_id, $taxonomy );
		$inv    = ( new Invalidation() )
			->tags( array( $s->term( $term_id ), $s->term_listing( $term_id ), $s->rest_term( $term_id ) ) )
			->tags( $s->rest_lists( Rest_Bases::of_taxonomy( $taxonomy ) ), true )
			->reason( sprintf( 'term %d edited', $term_id ) );
		if ( '' !== $before['link'] && $before['link'] !== $after['link'] ) {
			// Slug or parent changed: old archive, its pages, feeds and child terms move, and
			// pages printing the slug (post classes) change.
			// The new address too, with its pages and feed: an unknown term's feed is an empty 200
			// feed, which may be cached there.
			$inv->prefixes( array( $before['link'], $after['link'] ) )->tags( array( $s->term_slug( $term_id ) ) );
			// Descendants of a hierarchical term have its slug in their links, wherever shown.
			$children = is_taxonomy_hierarchical( $taxonomy ) ? get_term_children( $term_id, $taxonomy ) : array();
			foreach ( is_array( $children ) ? $children : array() as $child ) {
				$inv->tags( array( $s->term( (int) $child ), $s->rest_term( (int) $child ) ) );
			}
		}
		unset( $this->terms_before[ $term_id ] );
		$this->queue( $inv );
	}

	/**
	 * Action `delete_term`.
	 */
	public function on_term_deleted( int $term_id, int $tt_id, string $taxonomy ): void {
		if ( ! $this->is_content_term_change( $taxonomy ) ) {
			return;
		}
		$s      = $this->scheme();
		$before = $this->terms_before[ $term_id ] ?? array( 'link' => '' );
		$this->queue(
			( new Invalidation() )
				->tags( array_merge( array( $s->term( $term_id ), $s->term_slug( $term_id ), $s->term_listing( $term_id ), $s->rest_term( $term_id ), $s->term_list( $taxonomy ) ), $s->rest_lists( Rest_Bases::of_taxonomy( $taxonomy ) ) ) )
				->prefixes( '' !== $before['link'] ? array( $before['link'] ) : array() )
				->reason( sprintf( 'term %d deleted', $term_id ) )
		);
	}
}
