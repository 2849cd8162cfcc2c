<?php
/**
 * REST route of the live status.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * `GET /wp-json/varnish-edge/v1/live-status?post=<id>`: how far the current user's latest save of
 * that post got (needs `edit_post` on it); without `post`, their latest manual purge (needs the
 * purge capability). Always a fresh answer: it is never cached anywhere.
 */
class Live_Status_Route {

	const NAMESPACE = 'varnish-edge/v1';
	const ROUTE     = '/live-status';

	/** @var Live_Status_Log */
	private $log;

	/** @var Live_Status */
	private $status;

	/**
	 * Constructor.
	 *
	 * @param Live_Status_Log $log    The users' recent actions.
	 * @param Live_Status     $status Reads how far they got.
	 */
	public function __construct( Live_Status_Log $log, Live_Status $status ) {
		$this->log    = $log;
		$this->status = $status;
	}

	/**
	 * Hooks: the route.
	 */
	public function register(): void {
		add_action( 'rest_api_init', array( $this, 'register_route' ) );
	}

	/**
	 * Action `rest_api_init`.
	 */
	public function register_route(): void {
		register_rest_route(
			self::NAMESPACE,
			self::ROUTE,
			array(
				'methods'             => \WP_REST_Server::READABLE,
				'callback'            => array( $this, 'respond' ),
				'permission_callback' => array( $this, 'permission' ),
				'args'                => array(
					'post' => array(
						'description'       => __( 'The post whose latest save by the current user is reported; without it, their latest manual purge.', 'varnish-edge' ),
						'type'              => 'integer',
						'minimum'           => 1,
						'validate_callback' => 'rest_validate_request_arg',
					),
				),
			)
		);
	}

	/**
	 * Permission: edit the post (it must exist), or, without a post, purge.
	 */
	public function permission( \WP_REST_Request $request ): bool|\WP_Error {
		$post_id = (int) $request->get_param( 'post' );
		if ( null === $request->get_param( 'post' ) ) {
			return current_user_can( Admin_Bar::capability() ) ? true : $this->forbidden( __( 'Sorry, you are not allowed to see the status of manual purges.', 'varnish-edge' ) );
		}
		if ( ! get_post( $post_id ) ) {
			/* translators: %d: post id. */
			return new \WP_Error( 'varnish_edge_no_post', sprintf( __( 'There is no post with ID %d.', 'varnish-edge' ), $post_id ), array( 'status' => 404 ) );
		}
		return current_user_can( 'edit_post', $post_id ) ? true : $this->forbidden( __( 'Sorry, you are not allowed to edit this post.', 'varnish-edge' ) );
	}

	/**
	 * 401 when nobody is logged in, 403 otherwise.
	 */
	private function forbidden( string $message ): \WP_Error {
		return new \WP_Error( 'rest_forbidden', $message, array( 'status' => rest_authorization_required_code() ) );
	}

	/**
	 * The status, with the post it is about.
	 */
	public function respond( \WP_REST_Request $request ): \WP_REST_Response {
		$post_id  = (int) $request->get_param( 'post' );
		$status   = $this->status->of( $this->log->latest( get_current_user_id(), $post_id ) );
		$response = new \WP_REST_Response( array( 'post' => $post_id ) + $status );
		$response->header( 'Cache-Control', 'no-store' );
		return $response;
	}
}
