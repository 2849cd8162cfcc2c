<?php
/**
 * Invalidations for user changes.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Users: a public profile change purges the pages and REST responses showing the author; a
 * deletion purges them hard, with the posts reassigned to another author.
 */
class User_Changes extends Change_Handler {

	/**
	 * Above this many reassigned posts a deletion purges the whole site instead of each post.
	 */
	const MAX_REASSIGNED_POSTS = 500;

	/** @var array<int,array> User snapshots before update. */
	private $users_before = array();

	/** @var array<int,int[]> Public posts of users being deleted with their posts reassigned. */
	private $reassigned = array();

	/**
	 * Hook into WordPress.
	 */
	public function register(): void {
		add_filter( 'wp_pre_insert_user_data', array( $this, 'on_user_before' ), 10, 3 );
		add_action( 'profile_update', array( $this, 'on_profile_update' ), 10, 1 );
		add_action( 'delete_user', array( $this, 'on_user_deleting' ), 10, 2 );
		add_action( 'deleted_user', array( $this, 'on_user_deleted' ), 10, 2 );
	}

	/**
	 * Filter `wp_pre_insert_user_data`: snapshot the public profile before an update.
	 *
	 * @param array    $data    User data (returned unchanged).
	 * @param bool     $update  Whether the user exists.
	 * @param int|null $user_id User id (null for a new user).
	 */
	public function on_user_before( array $data, bool $update = false, ?int $user_id = null ): array {
		if ( $update && $user_id ) {
			$this->users_before[ $user_id ] = $this->user_state( $user_id );
		}
		return $data;
	}

	/**
	 * Public profile fields of a user (none when there is no such user).
	 *
	 * @return array<string,string>
	 */
	private function user_state( int $user_id ): array {
		$user = get_userdata( $user_id );
		if ( ! $user ) {
			return array();
		}
		return array(
			'display_name' => $user->display_name,
			'nicename'     => $user->user_nicename,
			'url'          => $user->user_url,
			'description'  => (string) get_user_meta( $user_id, 'description', true ),
			'link'         => get_author_posts_url( $user_id, $user->user_nicename ),
		);
	}

	/**
	 * Action `profile_update` (after meta is saved).
	 */
	public function on_profile_update( int $user_id ): void {
		$before = $this->users_before[ $user_id ] ?? null;
		unset( $this->users_before[ $user_id ] );
		$after = $this->user_state( $user_id );
		if ( null !== $before && $before === $after ) {
			return;
		}
		if ( ! count_user_posts( $user_id, 'post', true ) && ! count_user_posts( $user_id, 'page', true ) ) {
			return;
		}
		$s   = $this->scheme();
		$inv = ( new Invalidation() )
			->tags( array( $s->user( $user_id ), $s->author_listing( $user_id ), $s->rest_user( $user_id ), $s->rest_collection( 'users' ) ), true )
			->reason( sprintf( 'user %d profile updated', $user_id ) );
		if ( null !== $before && $before['link'] !== $after['link'] ) {
			// Both archives with their pages and feeds: WordPress answers an unknown author's
			// feed with an empty 200 feed, which may be cached at the new address.
			$inv->prefixes( array( $before['link'], $after['link'] ) );
		}
		$this->queue( $inv );
	}

	/**
	 * Action `delete_user` (before the deletion): `wp_delete_user()` reassigns posts with direct
	 * SQL, no post hook runs, so the posts whose author changes are noted now.
	 *
	 * @param int      $user_id  User being deleted.
	 * @param int|null $reassign User the posts go to (null: they are deleted).
	 */
	public function on_user_deleting( int $user_id, ?int $reassign = null ): void {
		if ( ! $reassign ) {
			return; // Without reassignment the posts are deleted one by one, with their hooks.
		}
		$this->reassigned[ $user_id ] = array_map(
			'intval',
			get_posts(
				array(
					'author'           => $user_id,
					'post_type'        => 'any',
					'post_status'      => 'publish',
					'fields'           => 'ids',
					'numberposts'      => self::MAX_REASSIGNED_POSTS + 1,
					'suppress_filters' => true,
				)
			)
		);
	}

	/**
	 * Action `deleted_user`: the user's pages and REST item, hard (a deleted user is never shown
	 * again); with reassigned posts, both authors and each post's pages and REST item.
	 *
	 * @param int      $user_id  Deleted user.
	 * @param int|null $reassign User the posts went to (null: they were deleted).
	 */
	public function on_user_deleted( int $user_id, ?int $reassign = null ): void {
		$s     = $this->scheme();
		$tags  = array( $s->user( $user_id ), $s->author_listing( $user_id ), $s->rest_user( $user_id ), $s->rest_collection( 'users' ) );
		$posts = $this->reassigned[ $user_id ] ?? array();
		unset( $this->reassigned[ $user_id ] );
		$inv = ( new Invalidation() )->reason( sprintf( 'user %d deleted', $user_id ) );
		if ( $reassign ) {
			$tags[] = $s->author_listing( $reassign );
		}
		if ( count( $posts ) > self::MAX_REASSIGNED_POSTS ) {
			$inv->everything();
		}
		foreach ( $posts as $post_id ) {
			$tags = array_merge( $tags, array( $s->post( $post_id ), $s->post_author( $post_id ), $s->rest_post( $post_id ) ) );
		}
		$this->queue( $inv->tags( $tags ) );
	}
}
