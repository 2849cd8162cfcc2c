<?php
/**
 * Surrogate keys of what the page's queries list.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Keys for what the main query is (home, archive, single, feed, search, 404, sitemap) and for each
 * post a loop renders (main or secondary).
 */
class Query_Keys extends Key_Source {

	/**
	 * Hooks: the main query's keys, then each post a loop renders or a sitemap lists.
	 */
	public function register(): void {
		add_action( 'template_redirect', array( $this, 'on_template_redirect' ), 0 );
		add_action( 'the_post', array( $this, 'on_the_post' ), 10, 1 );
		add_filter( 'wp_sitemaps_posts_entry', array( $this, 'on_sitemap_entry' ), 10, 2 );
		add_filter( 'wp_sitemaps_posts_show_on_front_entry', array( $this, 'on_sitemap_home_entry' ), 10, 1 );
	}

	/**
	 * Action `template_redirect` (early, before `Surrogate_Keys::start()`): keys for the main
	 * query of a cacheable request.
	 */
	public function on_template_redirect(): void {
		if ( $this->keys->is_cacheable_request() ) {
			$this->add_main_query_keys();
		}
	}

	/**
	 * Keys for what the main query is.
	 */
	public function add_main_query_keys(): void {
		global $wp_query;
		$s = $this->scheme();
		if ( get_query_var( 'sitemap' ) || get_query_var( 'sitemap-stylesheet' ) ) {
			$this->add( array( $s->listing( 'sitemaps' ) ) );
			return;
		}
		if ( is_404() ) {
			$this->add( array( $s->listing( '404' ) ) );
			return;
		}
		if ( is_feed() ) {
			$this->add( array( $s->listing( 'feed' ) ) );
			if ( $wp_query instanceof \WP_Query && ! $wp_query->have_posts() ) {
				// An empty feed (an unknown author or term, a post's old address) prints the
				// time any public post was last modified as its lastBuildDate.
				$this->add( array( $s->listing( 'lastmod' ) ) );
			}
			if ( ! is_archive() && ! is_search() && ! is_singular() && ! is_comment_feed() ) {
				$this->add( array( $s->listing( 'home' ) ) ); // The main feed lists what the blog home lists.
			}
		}
		if ( is_search() ) {
			$this->add( array( $s->listing( 'search' ) ) );
		}
		if ( is_front_page() ) {
			$this->add( array( $s->listing( 'front' ) ) );
		}
		if ( is_home() ) {
			$this->add( array( $s->listing( 'home' ) ) );
			$posts_page = (int) get_option( 'page_for_posts' );
			if ( $posts_page && 'page' === get_option( 'show_on_front' ) ) {
				$this->add( array( $s->post( $posts_page ) ) );
			}
		}
		if ( is_singular() ) {
			$post = get_queried_object();
			if ( $post instanceof \WP_Post ) {
				$this->add( array( $s->post( $post->ID ), $s->comments( $post->ID ) ) );
			}
		} elseif ( is_comment_feed() ) {
			$this->add( array( $s->listing( 'comments' ) ) );
		}
		if ( is_category() || is_tag() || is_tax() ) {
			$term = get_queried_object();
			if ( $term instanceof \WP_Term ) {
				$this->add( array( $s->term( $term->term_id ), $s->term_listing( $term->term_id ) ) );
			}
		}
		if ( is_author() ) {
			$author = (int) get_query_var( 'author' );
			$this->add( array( $s->user( $author ), $s->author_listing( $author ) ) );
		}
		if ( is_date() ) {
			$ymd = sprintf( '%04d', (int) get_query_var( 'year' ) );
			if ( get_query_var( 'monthnum' ) ) {
				$ymd .= sprintf( '%02d', (int) get_query_var( 'monthnum' ) );
				if ( get_query_var( 'day' ) ) {
					$ymd .= sprintf( '%02d', (int) get_query_var( 'day' ) );
				}
			}
			if ( ! get_query_var( 'year' ) && get_query_var( 'm' ) ) {
				$ymd = substr( preg_replace( '/[^0-9]/', '', (string) get_query_var( 'm' ) ), 0, 8 );
			}
			$this->add( array( $s->date( $ymd ) ) );
		}
		if ( is_post_type_archive() ) {
			foreach ( (array) get_query_var( 'post_type' ) as $type ) {
				$this->add( array( $s->post_type_archive( $type ) ) );
			}
		}
		if ( $wp_query instanceof \WP_Query ) {
			foreach ( (array) $wp_query->posts as $post ) {
				if ( ! $post instanceof \WP_Post ) {
					continue;
				}
				if ( is_feed() ) {
					$this->add( array( $s->post_feed( $post->ID ) ) );
				}
				if ( ! is_singular() ) {
					$this->on_the_post( $post );
				}
			}
		}
	}

	/**
	 * Filter `wp_sitemaps_posts_entry`: a post listed in a posts sitemap. Since WordPress 6.5 the
	 * entry prints the post's modified time (`lastmod`), which any save changes, as in feeds.
	 *
	 * @param array    $entry Sitemap entry (`loc`, optional `lastmod`...).
	 * @param \WP_Post $post  Post.
	 * @return array
	 */
	public function on_sitemap_entry( mixed $entry, mixed $post = null ): mixed {
		if ( is_array( $entry ) && isset( $entry['lastmod'] ) && $post instanceof \WP_Post ) {
			$this->add( array( $this->scheme()->post_feed( $post->ID ) ) );
		}
		return $entry;
	}

	/**
	 * Filter `wp_sitemaps_posts_show_on_front_entry`: the blog home's entry in the posts sitemap.
	 * Since WordPress 6.5 its `lastmod` is the newest modified time of the posts the home lists:
	 * the page depends on every save of those posts.
	 *
	 * @param array $entry Sitemap entry.
	 * @return array
	 */
	public function on_sitemap_home_entry( mixed $entry ): mixed {
		if ( ! is_array( $entry ) || ! isset( $entry['lastmod'] ) ) {
			return $entry;
		}
		// The query WP_Sitemaps_Posts::get_url_list() runs for this lastmod, ids only.
		$latest = new \WP_Query(
			array(
				'post_type'              => 'post',
				'post_status'            => 'publish',
				'orderby'                => 'date',
				'order'                  => 'DESC',
				'fields'                 => 'ids',
				'no_found_rows'          => true,
				'update_post_meta_cache' => false,
				'update_post_term_cache' => false,
			)
		);
		$s = $this->scheme();
		foreach ( $latest->posts as $id ) {
			$this->add( array( $s->post_feed( (int) $id ) ) );
		}
		return $entry;
	}

	/**
	 * Action `the_post`: a post rendered in any loop (main or secondary).
	 *
	 * @param \WP_Post $post Post.
	 */
	public function on_the_post( mixed $post ): void {
		if ( ! $post instanceof \WP_Post || is_admin() ) {
			return;
		}
		$s = $this->scheme();
		if ( is_singular() && (int) get_queried_object_id() === (int) $post->ID ) {
			return;
		}
		$this->add( array( is_comment_feed() ? $s->post_linked( $post->ID ) : $s->post_listed( $post->ID ) ) );
	}
}
