<?php
/**
 * Surrogate keys of REST responses.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * What a `wp/v2` (or oEmbed) response shows: each post, term, user and comment in it (from the
 * controllers' `rest_prepare_*` filters, embedded responses included), and what decides which
 * items a collection lists (from its route and query). A route this class does not know gets
 * no long TTL: nothing here could say which change alters it.
 */
class Rest_Keys extends Key_Source {

	/**
	 * Query parameters that page or shape a collection without choosing its members by content:
	 * such a collection lists the newest (or named) items of its base.
	 */
	const PLAIN_PARAMS = array( 'page', 'per_page', 'offset', 'order', 'orderby', 'context', '_fields', '_embed', '_envelope', '_locale', '_jsonp', 'include', 'exclude', 'status', 'rest_route' );

	/**
	 * Orders of plain post collections (by date or id: only a publish or a date change moves an item).
	 */
	const PLAIN_POST_ORDERS = array( '', 'date', 'id', 'include' );

	/**
	 * Orders of plain term collections (every term edit purges the taxonomy's collection key).
	 */
	const PLAIN_TERM_ORDERS = array( '', 'name', 'slug', 'id', 'include', 'term_group' );

	/**
	 * Routes describing what code registered (types, taxonomies, statuses): site-wide bans on plugin and theme changes cover them.
	 */
	const REGISTRY_ROUTES = array( 'types', 'taxonomies', 'statuses' );

	/**
	 * Hooks: each item a REST controller prepares, and the route and query of the response.
	 */
	public function register(): void {
		add_action( 'rest_api_init', array( $this, 'on_rest_api_init' ), 100 );
		add_filter( 'rest_post_dispatch', array( $this, 'on_rest_dispatch' ), 10, 3 );
	}

	/**
	 * Action `rest_api_init`: per-type filters (post types and taxonomies exist only after init).
	 */
	public function on_rest_api_init(): void {
		foreach ( get_post_types( array( 'show_in_rest' => true ) ) as $type ) {
			add_filter( "rest_prepare_{$type}", array( $this, 'on_rest_post' ), 10, 2 );
		}
		foreach ( get_taxonomies( array( 'show_in_rest' => true ) ) as $taxonomy ) {
			add_filter( "rest_prepare_{$taxonomy}", array( $this, 'on_rest_term' ), 10, 2 );
		}
		add_filter( 'rest_prepare_user', array( $this, 'on_rest_user' ), 10, 2 );
		add_filter( 'rest_prepare_comment', array( $this, 'on_rest_comment' ), 10, 2 );
	}

	/**
	 * Filter `rest_prepare_{post_type}`: a post in a REST response.
	 *
	 * @param \WP_REST_Response $response Response.
	 * @param \WP_Post          $post     Post.
	 * @return \WP_REST_Response
	 */
	public function on_rest_post( mixed $response, mixed $post ): mixed {
		if ( $post instanceof \WP_Post ) {
			$this->add( array( $this->scheme()->rest_post( $post->ID ) ) );
		}
		return $response;
	}

	/**
	 * Filter `rest_prepare_{taxonomy}`: the term, and its post count (`count`, in the view and
	 * edit contexts), which posts joining or leaving it change.
	 *
	 * @param \WP_REST_Response $response Response.
	 * @param \WP_Term          $term     Term.
	 * @return \WP_REST_Response
	 */
	public function on_rest_term( mixed $response, mixed $term ): mixed {
		if ( $term instanceof \WP_Term ) {
			$s = $this->scheme();
			$this->add( array( $s->rest_term( $term->term_id ) ) );
			if ( ! $response instanceof \WP_REST_Response || array_key_exists( 'count', (array) $response->get_data() ) ) {
				$this->add( array( $s->term_count( $term->term_id ) ) );
			}
		}
		return $response;
	}

	/**
	 * Filter `rest_prepare_user`.
	 *
	 * @param \WP_REST_Response $response Response.
	 * @param \WP_User          $user     User.
	 * @return \WP_REST_Response
	 */
	public function on_rest_user( mixed $response, mixed $user ): mixed {
		if ( $user instanceof \WP_User ) {
			$this->add( array( $this->scheme()->rest_user( $user->ID ) ) );
		}
		return $response;
	}

	/**
	 * Filter `rest_prepare_comment`: a comment shows in the response. It carries its post's
	 * comment key (`c-N`), which every change of an approved comment on that post purges (a
	 * deletion also re-parents its replies), and which the post leaving public view purges hard.
	 *
	 * @param \WP_REST_Response $response Response.
	 * @param \WP_Comment       $comment  Comment.
	 * @return \WP_REST_Response
	 */
	public function on_rest_comment( mixed $response, mixed $comment ): mixed {
		if ( $comment instanceof \WP_Comment ) {
			$this->add( array( $this->scheme()->comments( (int) $comment->comment_post_ID ) ) );
		}
		return $response;
	}

	/**
	 * Filter `rest_post_dispatch` (the response and each embedded one): the keys of what chose
	 * the items, or, for a route without rules here, no long TTL for the whole response.
	 *
	 * @param \WP_HTTP_Response $response Response.
	 * @param \WP_REST_Server   $server   Server.
	 * @param \WP_REST_Request  $request  Request.
	 * @return \WP_HTTP_Response
	 */
	public function on_rest_dispatch( mixed $response, mixed $server, mixed $request ): mixed {
		if ( ! $request instanceof \WP_REST_Request || ! in_array( $request->get_method(), array( 'GET', 'HEAD' ), true ) ) {
			return $response;
		}
		$keys = $this->route_keys( $request );
		if ( null === $keys ) {
			$this->keys->unknown_route();
		} else {
			$this->add( $keys );
		}
		return $response;
	}

	/**
	 * Keys of a route's own rules, on top of its items' keys; null for a route without rules.
	 *
	 * @return string[]|null
	 */
	public function route_keys( \WP_REST_Request $request ): ?array {
		$route = untrailingslashit( (string) $request->get_route() );
		if ( 0 === strpos( $route, '/oembed/1.0/embed' ) ) {
			return $this->oembed_keys( $request );
		}
		if ( ! preg_match( '#^/wp/v2/([a-z0-9_-]+)(?:/([0-9]+))?$#', $route, $m ) ) {
			return preg_match( '#^/wp/v2/(' . implode( '|', self::REGISTRY_ROUTES ) . ')/[a-z0-9_-]+$#', $route, $r ) ? array( $this->scheme()->rest_collection( $r[1] ) ) : null;
		}
		$base = $m[1];
		$item = isset( $m[2] );
		$s    = $this->scheme();
		if ( in_array( $base, self::REGISTRY_ROUTES, true ) ) {
			return $item ? null : array( $s->rest_collection( $base ) );
		}
		if ( 'comments' === $base ) {
			return $item ? array() : $this->comment_collection_keys( $request );
		}
		if ( 'users' === $base ) {
			// Who is listed (authors of public posts) and in which order (name) changes only
			// with profile changes, deletions and (un)publishing, which all purge this key.
			return $item ? array() : array( $s->rest_collection( 'users' ) );
		}
		if ( 'search' === $base ) {
			return $item ? null : $this->search_keys( $request );
		}
		if ( null !== Rest_Bases::type_of( $base ) ) {
			if ( $item ) {
				return array();
			}
			return $this->is_plain( $request, self::PLAIN_POST_ORDERS ) ? array( $s->rest_collection( $base ) ) : array( $s->rest_query( $base ) );
		}
		if ( null !== Rest_Bases::taxonomy_of( $base ) ) {
			return $item ? array() : $this->term_collection_keys( $request, $base );
		}
		return null;
	}

	/**
	 * Comments listed for given posts carry those posts' comment keys; any other comment
	 * listing (the newest comments of the site, by author, by parent) the site-wide one.
	 *
	 * @return string[]
	 */
	private function comment_collection_keys( \WP_REST_Request $request ): array {
		$s     = $this->scheme();
		$posts = array_filter( array_map( 'intval', wp_parse_list( $request->get_param( 'post' ) ?? array() ) ) );
		if ( array() === $posts ) {
			return array( $s->listing( 'comments' ) );
		}
		return array_values( array_map( array( $s, 'comments' ), $posts ) );
	}

	/**
	 * Terms of given posts (the `wp:term` links a post embeds) carry the posts' terms keys;
	 * a taxonomy's plain listing its collection key; a filtered or count-ordered one its query
	 * key, which post term changes purge too.
	 *
	 * @param string $base REST base of the taxonomy.
	 * @return string[]
	 */
	private function term_collection_keys( \WP_REST_Request $request, string $base ): array {
		$s      = $this->scheme();
		$params = $request->get_query_params();
		if ( isset( $params['post'] ) ) {
			unset( $params['post'] );
			$posts = array_filter( array_map( 'intval', wp_parse_list( $request->get_param( 'post' ) ) ) );
			if ( $posts && ! array_diff( array_keys( $params ), self::PLAIN_PARAMS ) ) {
				return array_values( array_map( array( $s, 'post_terms' ), $posts ) );
			}
			return array( $s->rest_query( $base ) );
		}
		return $this->is_plain( $request, self::PLAIN_TERM_ORDERS ) ? array( $s->rest_collection( $base ) ) : array( $s->rest_query( $base ) );
	}

	/**
	 * `/wp/v2/search`: posts found by their text (the `search` listing, purged on every title,
	 * content, excerpt or status change; each result's title and link carry its `pn-N`), or
	 * terms (the query keys of every taxonomy shown in REST).
	 *
	 * @return string[]
	 */
	private function search_keys( \WP_REST_Request $request ): array {
		$s    = $this->scheme();
		$keys = array( $s->listing( 'search' ) );
		if ( 'post' !== ( $request->get_param( 'type' ) ?? 'post' ) ) {
			foreach ( get_taxonomies( array( 'show_in_rest' => true ) ) as $taxonomy ) {
				$keys[] = $s->rest_query( Rest_Bases::of_taxonomy( $taxonomy ) );
			}
		}
		return $keys;
	}

	/**
	 * oEmbed shows the post's title, excerpt, author and link.
	 *
	 * @return string[]|null
	 */
	private function oembed_keys( \WP_REST_Request $request ): ?array {
		$post_id = url_to_postid( (string) $request->get_param( 'url' ) );
		if ( ! $post_id ) {
			return null;
		}
		$s = $this->scheme();
		return array( $s->post_listed( $post_id ), $s->post_author( $post_id ), $s->rest_post( $post_id ) );
	}

	/**
	 * Whether a collection request only pages and orders (by an order its base's collection key
	 * covers) the newest or named items.
	 *
	 * @param string[] $orders Orders covered.
	 */
	private function is_plain( \WP_REST_Request $request, array $orders ): bool {
		$params = $request->get_query_params();
		if ( array_diff( array_keys( $params ), self::PLAIN_PARAMS ) ) {
			return false;
		}
		$order  = $params['orderby'] ?? '';
		$status = $params['status'] ?? 'publish';
		return is_string( $order ) && in_array( $order, $orders, true ) && in_array( $status, array( 'publish', array( 'publish' ) ), true );
	}
}
