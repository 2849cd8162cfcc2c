<?php
/**
 * Surrogate keys of what templates and blocks print.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Template tags and blocks that show other content: terms, authors, links and excerpts of other
 * posts, page lists, comment counts, blocks, menus, widgets, the site's name, tagline, icon, logo.
 */
class Render_Keys extends Key_Source {

	/** @var bool Inside get_post_class(), which shows term slugs only (as CSS classes). */
	private $in_post_class = false;

	/**
	 * Hooks: the template tags and blocks that print other content.
	 */
	public function register(): void {
		add_filter( 'previous_post_link', array( $this, 'on_adjacent_link' ), 10, 4 );
		add_filter( 'next_post_link', array( $this, 'on_adjacent_link' ), 10, 4 );
		add_filter( 'get_pages', array( $this, 'on_get_pages' ), 10, 1 );
		add_filter( 'post_link', array( $this, 'on_post_link' ), 10, 2 );
		add_filter( 'page_link', array( $this, 'on_post_link' ), 10, 2 );
		add_filter( 'post_type_link', array( $this, 'on_post_link' ), 10, 2 );
		add_filter( 'get_the_excerpt', array( $this, 'on_excerpt' ), 10, 2 );
		add_filter( 'get_comments_number', array( $this, 'on_comments_number' ), 10, 2 );
		add_filter( 'render_block', array( $this, 'on_render_block' ), 10, 3 );
		add_filter( 'get_the_terms', array( $this, 'on_get_the_terms' ), 10, 3 );
		add_filter( 'get_terms', array( $this, 'on_get_terms' ), 10, 3 );
		add_filter( 'post_class_taxonomies', array( $this, 'on_post_class_start' ), 10, 1 );
		add_filter( 'post_class', array( $this, 'on_post_class_end' ), 10, 1 );
		add_filter( 'the_author', array( $this, 'on_the_author' ), 10, 1 );
		add_filter( 'author_link', array( $this, 'on_author_link' ), 10, 2 );
		foreach ( array( 'display_name', 'nickname', 'description', 'user_url' ) as $field ) {
			add_filter( "get_the_author_{$field}", array( $this, 'on_author_meta' ), 10, 2 );
		}
		foreach ( array_keys( Option_Changes::IDENTITY_OPTIONS ) as $option ) {
			add_filter( "option_{$option}", array( $this, 'on_identity_read' ), 10, 1 );
			add_filter( "default_option_{$option}", array( $this, 'on_identity_read' ), 10, 1 );
		}
		add_filter( 'wp_nav_menu', array( $this, 'on_nav_menu' ), 10, 1 );
		add_action( 'dynamic_sidebar_before', array( $this, 'on_sidebar' ), 10, 0 );
	}

	/**
	 * Filter `get_the_terms`: a post's terms are displayed (post-terms block, category lists,
	 * feed categories). REST responses expose term ids only and are keyed by r-t instead.
	 *
	 * @param \WP_Term[]|false|\WP_Error $terms Terms.
	 * @return \WP_Term[]|false|\WP_Error
	 */
	public function on_get_the_terms( mixed $terms, int $post_id = 0, string $taxonomy = '' ): mixed {
		if ( ! is_array( $terms ) || is_admin() || ( defined( 'REST_REQUEST' ) && REST_REQUEST ) || ! is_taxonomy_viewable( $taxonomy ) ) {
			return $terms;
		}
		$s = $this->scheme();
		$this->add( array( $s->post_terms( (int) $post_id ) ) );
		foreach ( $terms as $term ) {
			if ( $term instanceof \WP_Term ) {
				$this->add( array( $this->in_post_class ? $s->term_slug( $term->term_id ) : $s->term( $term->term_id ) ) );
			}
		}
		return $terms;
	}

	/**
	 * Filter `get_terms`: a list of terms (Categories block and widget, tag cloud block and
	 * widget, `wp_list_categories()`, `wp_dropdown_categories()`, a theme's own list). Each term's
	 * name and link (`t-N`), its count when the list prints counts (`tc-N`), which terms the list
	 * holds (`tx-<taxonomy>`: terms created, deleted, becoming empty or not), and, for a list
	 * shaped by all the counts (a tag cloud's sizes, an order by count, counts padded with the
	 * children's), the taxonomy's counts (`tcx-<taxonomy>`). REST responses too: a post's
	 * rendered content may hold such a list. Not the terms of given posts (`object_ids`, as
	 * `wp_get_object_terms()` asks): `get_the_terms` and `pt-N` cover those.
	 *
	 * @param array<int,mixed>|mixed $terms      Terms found.
	 * @param string[]|null          $taxonomies Taxonomies queried.
	 * @param array<string,mixed>    $args       Query vars (the caller's arguments included).
	 * @return array<int,mixed>|mixed
	 */
	public function on_get_terms( mixed $terms, mixed $taxonomies = null, mixed $args = array() ): mixed {
		$args = is_array( $args ) ? $args : array();
		if ( ! is_array( $terms ) || is_admin() || ! empty( $args['object_ids'] ) ) {
			return $terms;
		}
		$s     = $this->scheme();
		$count = ! empty( $args['show_count'] );
		$taxes = array_fill_keys( array_map( 'strval', (array) $taxonomies ), true );
		foreach ( $terms as $term ) {
			// Menus are terms too (Site_Changes); other taxonomies no public page shows need nothing.
			if ( $term instanceof \WP_Term && is_taxonomy_viewable( $term->taxonomy ) ) {
				$taxes[ $term->taxonomy ] = true;
				$this->add( $count ? array( $s->term( $term->term_id ), $s->term_count( $term->term_id ) ) : array( $s->term( $term->term_id ) ) );
			}
		}
		$by_counts = 'count' === ( $args['orderby'] ?? '' ) || ! empty( $args['pad_counts'] );
		foreach ( array_keys( $taxes ) as $taxonomy ) {
			if ( taxonomy_exists( $taxonomy ) && is_taxonomy_viewable( $taxonomy ) ) {
				$this->add( $by_counts ? array( $s->term_list( $taxonomy ), $s->term_counts( $taxonomy ) ) : array( $s->term_list( $taxonomy ) ) );
			}
		}
		return $terms;
	}

	/**
	 * Filter `post_class_taxonomies`: the term lookups that follow only print slugs.
	 *
	 * @param array $taxonomies Taxonomies.
	 * @return array
	 */
	public function on_post_class_start( mixed $taxonomies ): mixed {
		$this->in_post_class = true;
		return $taxonomies;
	}

	/**
	 * Filter `post_class`: end of the post class term lookups.
	 *
	 * @param string[] $classes Classes.
	 * @return string[]
	 */
	public function on_post_class_end( mixed $classes ): mixed {
		$this->in_post_class = false;
		return $classes;
	}

	/**
	 * Filter `the_author` (classic loops, feeds): the current post's author is displayed.
	 *
	 * @param string|null $name Display name.
	 * @return string|null
	 */
	public function on_the_author( mixed $name ): mixed {
		$post = get_post();
		if ( $post && ! is_admin() ) {
			$s = $this->scheme();
			$this->add( array( $s->post_author( $post->ID ), $s->user( (int) $post->post_author ) ) );
		}
		return $name;
	}

	/**
	 * Filters `get_the_author_{field}` (display name, nickname, bio, URL): a user's profile shown
	 * outside the author template tags (the latest-posts block prints the display name this way).
	 *
	 * @param string $value   Value.
	 * @param int    $user_id User id.
	 * @return string
	 */
	public function on_author_meta( mixed $value, mixed $user_id = 0 ): mixed {
		if ( $user_id && ! is_admin() ) {
			$this->add( array( $this->scheme()->user( (int) $user_id ) ) );
		}
		return $value;
	}

	/**
	 * Filter `author_link`: a link to an author archive (name and URL of the user shown).
	 *
	 * @param string $link      Link.
	 * @param int    $author_id Author.
	 * @return string
	 */
	public function on_author_link( mixed $link, mixed $author_id = 0 ): mixed {
		if ( $author_id && ! is_admin() ) {
			$this->add( array( $this->scheme()->user( (int) $author_id ) ) );
			$post = get_post();
			if ( $post && (int) $post->post_author === (int) $author_id ) {
				$this->add( array( $this->scheme()->post_author( $post->ID ) ) );
			}
		}
		return $link;
	}

	/**
	 * Filters `post_link` / `page_link` / `post_type_link`: any link to a post (widgets, blocks,
	 * menus) shows its URL and, usually, its title.
	 *
	 * @param string       $link Permalink.
	 * @param \WP_Post|int $post Post or id.
	 * @return string
	 */
	public function on_post_link( mixed $link, mixed $post = 0 ): mixed {
		$id = $post instanceof \WP_Post ? (int) $post->ID : (int) $post;
		if ( $id && ! is_admin() && ! ( is_singular() && get_queried_object_id() === $id ) ) {
			$this->add( array( $this->scheme()->post_linked( $id ) ) );
		}
		return $link;
	}

	/**
	 * Filter `get_the_excerpt`: an excerpt shown outside the main loop (latest-posts block, widgets).
	 *
	 * @param string            $excerpt Excerpt.
	 * @param \WP_Post|int|null $post    Post.
	 * @return string
	 */
	public function on_excerpt( mixed $excerpt, mixed $post = null ): mixed {
		$id = $post instanceof \WP_Post ? (int) $post->ID : (int) $post;
		if ( $id && ! is_admin() && ! ( is_singular() && get_queried_object_id() === $id ) ) {
			$this->add( array( $this->scheme()->post_listed( $id ) ) );
		}
		return $excerpt;
	}

	/**
	 * Filters `previous_post_link` / `next_post_link`: the adjacent post is linked by title.
	 *
	 * @param string        $output Link HTML.
	 * @param string        $format Format.
	 * @param string        $link   Link format.
	 * @param \WP_Post|null $post   Adjacent post.
	 * @return string
	 */
	public function on_adjacent_link( mixed $output, mixed $format = '', mixed $link = '', mixed $post = null ): mixed {
		if ( $post instanceof \WP_Post ) {
			$s = $this->scheme();
			$this->add( array( $s->post_linked( $post->ID ) ) );
			if ( is_singular() ) {
				$this->add( array( $s->neighbors( get_queried_object_id() ) ) );
			}
		}
		return $output;
	}

	/**
	 * Filter `get_pages`: page lists (page-list block, wp_list_pages) link pages by title.
	 *
	 * @param \WP_Post[] $pages Pages.
	 * @return \WP_Post[]
	 */
	public function on_get_pages( mixed $pages ): mixed {
		if ( ! is_admin() ) {
			$s = $this->scheme();
			$this->add( array( $s->listing( 'pages' ) ) );
			foreach ( (array) $pages as $page ) {
				if ( $page instanceof \WP_Post ) {
					$this->add( array( $s->post_linked( $page->ID ) ) );
				}
			}
		}
		return $pages;
	}

	/**
	 * Filter `get_comments_number`: the page shows a comment count.
	 *
	 * @param int $count   Count.
	 * @param int $post_id Post id.
	 * @return int
	 */
	public function on_comments_number( mixed $count, mixed $post_id = 0 ): mixed {
		if ( $post_id && ! is_admin() ) {
			$this->add( array( $this->scheme()->comments( (int) $post_id ) ) );
		}
		return $count;
	}

	/**
	 * Filter `render_block`: navigation, comment, author and latest-posts blocks.
	 *
	 * @param string         $html     Block HTML.
	 * @param \WP_Block|null $instance Block instance (context).
	 * @return string
	 */
	public function on_render_block( mixed $html, array $block, mixed $instance = null ): mixed {
		$s = $this->scheme();
		switch ( $block['blockName'] ?? '' ) {
			case 'core/post-author':
			case 'core/post-author-name':
			case 'core/post-author-biography':
				$post_id = ( $instance instanceof \WP_Block && isset( $instance->context['postId'] ) ) ? (int) $instance->context['postId'] : (int) get_the_ID();
				if ( $post_id ) {
					$this->add( array( $s->post_author( $post_id ), $s->user( (int) get_post_field( 'post_author', $post_id ) ) ) );
				}
				break;
			case 'core/navigation':
				$this->add( array( $s->listing( 'menus' ) ) );
				break;
			case 'core/latest-comments':
				$this->add( array( $s->listing( 'comments' ) ) );
				break;
			case 'core/latest-posts':
				$this->add( array( $s->listing( 'home' ) ) );
				break;
			case 'core/query':
				$this->add( $this->query_loop_keys( is_array( $block['attrs']['query'] ?? null ) ? $block['attrs']['query'] : array() ) );
				break;
			case 'core/block':
				if ( ! empty( $block['attrs']['ref'] ) ) {
					$this->add( array( $s->embedded( (int) $block['attrs']['ref'] ) ) );
				}
				break;
		}
		return $html;
	}

	/**
	 * Listing keys of a query loop (core/query block) that runs its own query, e.g. the "More
	 * posts" list Twenty Twenty-Five shows on single posts. Each post it prints is keyed by
	 * `the_post` (`pl-N`); these keys make the posts that enter or leave it (a publish, an
	 * unpublish, a move between terms or authors) refresh the page. What the code cannot prove
	 * leaves the list alone is keyed too: a loop ordered by anything but the date, or searching,
	 * depends on posts' text and gets `search` (purged on title/content/excerpt changes).
	 *
	 * @param array $query The block's `query` attribute.
	 * @return string[]
	 */
	private function query_loop_keys( array $query ): array {
		if ( ! empty( $query['inherit'] ) ) {
			return array(); // The main query's results: keyed by Query_Keys.
		}
		$s     = $this->scheme();
		$keys  = array();
		$types = isset( $query['postType'] ) && '' !== $query['postType'] ? (array) $query['postType'] : array( 'post' );
		// Post types in the home listing, as Live_Post_Facts::is_listed() reads them.
		$listed = (array) apply_filters( 'varnish_edge_listed_post_types', array( 'post' ) );
		foreach ( $types as $type ) {
			$type   = sanitize_key( (string) $type );
			$keys[] = $s->post_type_archive( $type ); // Purged when a post of the type is (un)published.
			if ( in_array( $type, $listed, true ) ) {
				$keys[] = $s->listing( 'home' ); // Also purged on date and sticky changes.
			}
			if ( 'page' === $type ) {
				$keys[] = $s->listing( 'pages' );
			}
		}
		if ( ! empty( $query['taxQuery'] ) && is_array( $query['taxQuery'] ) ) {
			array_walk_recursive(
				$query['taxQuery'],
				function ( mixed $term_id ) use ( &$keys, $s ): void {
					if ( is_numeric( $term_id ) && (int) $term_id > 0 ) {
						$keys[] = $s->term_listing( (int) $term_id );
					}
				}
			);
		}
		if ( ! empty( $query['author'] ) ) {
			$authors = is_array( $query['author'] ) ? $query['author'] : explode( ',', (string) $query['author'] );
			foreach ( $authors as $author ) {
				if ( is_numeric( $author ) && (int) $author > 0 ) {
					$keys[] = $s->author_listing( (int) $author );
				}
			}
		}
		$order_by = (string) ( $query['orderBy'] ?? 'date' );
		if ( ! empty( $query['search'] ) || ! in_array( $order_by, array( '', 'date' ), true ) ) {
			$keys[] = $s->listing( 'search' );
		}
		return array_values( array_unique( $keys ) );
	}

	/**
	 * Filters `option_{name}` / `default_option_{name}` of the site's name, tagline, icon and
	 * logo: whatever reads one may print it (the document title, feeds, the REST index, oEmbed's
	 * provider name, site title and logo blocks), so the response gets its `site-<part>` key
	 * where it is read.
	 *
	 * @param mixed $value Option value.
	 * @return mixed
	 */
	public function on_identity_read( mixed $value ): mixed {
		$option = preg_replace( '/^(default_)?option_/', '', (string) current_filter() );
		if ( isset( Option_Changes::IDENTITY_OPTIONS[ $option ] ) ) {
			$this->add( array( $this->scheme()->identity( Option_Changes::IDENTITY_OPTIONS[ $option ] ) ) );
		}
		return $value;
	}

	/**
	 * Filter `wp_nav_menu`: classic menus.
	 *
	 * @param string $html Menu HTML.
	 * @return string
	 */
	public function on_nav_menu( mixed $html ): mixed {
		$this->add( array( $this->scheme()->listing( 'menus' ) ) );
		return $html;
	}

	/**
	 * Action `dynamic_sidebar_before`: classic widgets.
	 */
	public function on_sidebar(): void {
		$this->add( array( $this->scheme()->listing( 'widgets' ) ) );
	}
}
