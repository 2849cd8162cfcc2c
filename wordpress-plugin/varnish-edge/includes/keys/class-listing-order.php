<?php
/**
 * One order for posts published in the same second.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * WordPress orders listings (home, archives, feeds, query loops, REST collections) by
 * `post_date` alone, to the second. Posts published in the same second (an import, several
 * scheduled posts, two quick saves) tie, and MariaDB and MySQL return tied rows in whatever order
 * the query plan gives, which is not the same from one render to the next. Behind a cache that
 * matters: the copy Varnish keeps lists them one way while the next render lists them the other
 * (no purge can make them agree, and a stale-page audit sees a difference that never goes away),
 * and page 1 and page 2 of a listing, rendered at different times, can both show, or both miss,
 * the post at their boundary. The post id breaks the tie, in the listing's direction: newest
 * first lists the later-created post first.
 *
 * SQL only (`posts_orderby`): no query variable changes. Queries run with `suppress_filters`
 * (`get_posts()`'s default) keep WordPress's order.
 */
class Listing_Order {

	/**
	 * Hook into WordPress.
	 */
	public function register(): void {
		add_filter( 'posts_orderby', array( $this, 'on_posts_orderby' ), 10, 2 );
	}

	/**
	 * Filter `posts_orderby`: an ORDER BY that ends with the post date gets the post id after it.
	 *
	 * @param mixed $orderby ORDER BY clause (without the keywords); another plugin may pass anything.
	 */
	public function on_posts_orderby( mixed $orderby, mixed $query = null ): mixed {
		global $wpdb;
		if ( ! is_string( $orderby ) ) {
			return $orderby;
		}
		$posts = preg_quote( $wpdb->posts, '/' );
		if ( preg_match( '/(?:^|,)\s*' . $posts . '\.post_date\s+(ASC|DESC)\s*$/i', $orderby, $m ) ) {
			$orderby .= ', ' . $wpdb->posts . '.ID ' . strtoupper( $m[1] );
		}
		return $orderby;
	}
}
