<?php
/**
 * Invalidations for term changes.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Terms created, edited or deleted: their archives, the pages showing them, their REST items and
 * collections. Terms of `nav_menu` are menus (handed to `Site_Changes`).
 */
class Term_Changes extends Change_Handler {

	/** @var array<int,array> Term snapshots before edit/delete. */
	private $terms_before = array();

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
				->tags( array_merge( array( $s->term( $term_id ), $s->term_slug( $term_id ), $s->term_listing( $term_id ), $s->rest_term( $term_id ) ), $s->rest_lists( Rest_Bases::of_taxonomy( $taxonomy ) ) ) )
				->prefixes( '' !== $before['link'] ? array( $before['link'] ) : array() )
				->reason( sprintf( 'term %d deleted', $term_id ) )
		);
	}
}
