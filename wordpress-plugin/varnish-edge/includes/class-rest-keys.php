<?php
/**
 * Surrogate keys of REST responses.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Posts, terms and users in REST responses, collection routes, oEmbed.
 */
class Rest_Keys extends Key_Source {

	/**
	 * Filter `rest_prepare_{post_type}`: a post in a REST response.
	 *
	 * @param \WP_REST_Response $response Response.
	 * @param \WP_Post          $post     Post.
	 * @return \WP_REST_Response
	 */
	public function on_rest_post( $response, $post ) {
		if ( $post instanceof \WP_Post ) {
			$this->add( array( $this->scheme()->rest_post( $post->ID ) ) );
		}
		return $response;
	}

	/**
	 * Filter `rest_prepare_{taxonomy}`.
	 *
	 * @param \WP_REST_Response $response Response.
	 * @param \WP_Term          $term     Term.
	 * @return \WP_REST_Response
	 */
	public function on_rest_term( $response, $term ) {
		if ( $term instanceof \WP_Term ) {
			$this->add( array( $this->scheme()->rest_term( $term->term_id ) ) );
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
	public function on_rest_user( $response, $user ) {
		if ( $user instanceof \WP_User ) {
			$this->add( array( $this->scheme()->rest_user( $user->ID ) ) );
		}
		return $response;
	}

	/**
	 * Filter `rest_post_dispatch`: collection routes get their collection key.
	 *
	 * @param \WP_HTTP_Response $response Response.
	 * @param \WP_REST_Server   $server   Server.
	 * @param \WP_REST_Request  $request  Request.
	 * @return \WP_HTTP_Response
	 */
	public function on_rest_dispatch( $response, $server, $request ) {
		if ( ! $request instanceof \WP_REST_Request || 'GET' !== $request->get_method() ) {
			return $response;
		}
		$route = (string) $request->get_route();
		if ( preg_match( '#^/wp/v2/([a-z0-9_-]+)/?$#', $route, $m ) ) {
			$this->add( array( $this->scheme()->rest_collection( $m[1] ) ) );
		} elseif ( 0 === strpos( $route, '/oembed/1.0/embed' ) ) {
			// oEmbed shows the post's title, excerpt, author and link.
			$post_id = url_to_postid( (string) $request->get_param( 'url' ) );
			if ( $post_id ) {
				$s = $this->scheme();
				$this->add( array( $s->post_listed( $post_id ), $s->post_author( $post_id ), $s->rest_post( $post_id ) ) );
			}
		}
		return $response;
	}
}
