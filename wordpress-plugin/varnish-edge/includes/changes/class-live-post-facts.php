<?php
/**
 * The site's answers to the post rules' questions.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * `Post_Facts` read from the running WordPress: post type registry, the
 * `varnish_edge_listed_post_types` filter, the posts table.
 */
class Live_Post_Facts implements Post_Facts {

	/**
	 * Whether posts of a type have public pages.
	 */
	public function is_viewable( string $type ): bool {
		return is_post_type_viewable( $type );
	}

	/**
	 * Whether a post type is hierarchical.
	 */
	public function is_hierarchical( string $type ): bool {
		return is_post_type_hierarchical( $type );
	}

	/**
	 * Whether a post type is shown in the home, author and date listings.
	 */
	public function is_listed( string $type ): bool {
		/**
		 * Post types shown in the home, author and date listings.
		 *
		 * @param string[] $types Post types.
		 */
		return in_array( $type, (array) apply_filters( 'varnish_edge_listed_post_types', array( 'post' ) ), true );
	}

	/**
	 * The `wp/v2` route base of a post type.
	 */
	public function type_base( string $type ): string {
		return Rest_Bases::of_type( $type );
	}

	/**
	 * The `wp/v2` route base of a taxonomy.
	 */
	public function taxonomy_base( string $taxonomy ): string {
		return Rest_Bases::of_taxonomy( $taxonomy );
	}

	/**
	 * Ids of the published posts just before and just after a post in this state.
	 *
	 * @param array<string,mixed> $state Post snapshot.
	 * @return int[]
	 */
	public function neighbors( array $state ): array {
		global $wpdb;
		$ids = array();
		foreach ( array( '<' => 'DESC', '>' => 'ASC' ) as $op => $order ) {
			$id = $wpdb->get_var( $wpdb->prepare( "SELECT ID FROM {$wpdb->posts} WHERE post_type = %s AND post_status = 'publish' AND ID <> %d AND post_date {$op} %s ORDER BY post_date {$order}, ID {$order} LIMIT 1", $state['type'], $state['id'], $state['date'] ) );
			if ( $id ) {
				$ids[] = (int) $id;
			}
		}
		return $ids;
	}

	/**
	 * How many public posts (of the types the REST API shows) the user is the author of.
	 */
	public function public_post_count( int $author ): int {
		$types = array_values( get_post_types( array( 'show_in_rest' => true ) ) );
		return (int) count_user_posts( $author, $types, true );
	}

	/**
	 * The home page, then the posts page when the front is a static page.
	 *
	 * @return string[]
	 */
	public function front_urls(): array {
		$urls  = array( home_url( '/' ) );
		$posts = 'page' === get_option( 'show_on_front' ) ? (int) get_option( 'page_for_posts' ) : 0;
		if ( $posts > 0 && 'publish' === get_post_status( $posts ) ) {
			$urls[] = (string) get_permalink( $posts );
		}
		return $urls;
	}

	/**
	 * The first page of a term's archive ('' when it has none).
	 */
	public function term_url( int $term_id, string $taxonomy ): string {
		$url = get_term_link( $term_id, $taxonomy );
		return is_string( $url ) ? $url : '';
	}

	/**
	 * A published post's own page ('' when it has none).
	 */
	public function post_url( int $id ): string {
		return 'publish' === get_post_status( $id ) ? (string) get_permalink( $id ) : '';
	}

	/**
	 * The main feed.
	 */
	public function feed_url(): string {
		return (string) get_feed_link();
	}
}
