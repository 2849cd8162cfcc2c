<?php
/**
 * Invalidations for user changes.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Users: a public profile change purges the pages showing the author; a deletion purges both
 * authors of the reassigned posts.
 */
class User_Changes extends Change_Handler {

	/** @var array<int,array> User snapshots before update. */
	private $users_before = array();

	/**
	 * Filter `wp_pre_insert_user_data`: snapshot the public profile before an update.
	 *
	 * @param array $data    User data.
	 * @param bool  $update  Update.
	 * @param int   $user_id User id.
	 * @return array
	 */
	public function on_user_before( $data, $update = false, $user_id = null ) {
		if ( $update && $user_id ) {
			$this->users_before[ (int) $user_id ] = $this->user_state( (int) $user_id );
		}
		return $data;
	}

	/**
	 * Public profile fields of a user.
	 *
	 * @param int $user_id User id.
	 * @return array
	 */
	private function user_state( $user_id ) {
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
	 *
	 * @param int $user_id User id.
	 */
	public function on_profile_update( $user_id ) {
		$user_id = (int) $user_id;
		$before  = $this->users_before[ $user_id ] ?? null;
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
			->tags( array( $s->user( $user_id ), $s->author_listing( $user_id ), $s->rest_user( $user_id ) ), true )
			->reason( sprintf( 'user %d profile updated', $user_id ) );
		if ( null !== $before && $before['link'] !== $after['link'] ) {
			$inv->prefixes( array( $before['link'] ) )->urls( array( $after['link'] ) );
		}
		$this->queue( $inv );
	}

	/**
	 * Action `deleted_user`: posts reassigned with direct SQL, so purge both authors.
	 *
	 * @param int      $user_id  Deleted user.
	 * @param int|null $reassign Reassigned to.
	 */
	public function on_user_deleted( $user_id, $reassign = null ) {
		$s    = $this->scheme();
		$tags = array( $s->user( $user_id ), $s->author_listing( $user_id ), $s->rest_user( $user_id ) );
		if ( $reassign ) {
			$tags[] = $s->author_listing( (int) $reassign );
		}
		$this->queue( ( new Invalidation() )->tags( $tags )->reason( sprintf( 'user %d deleted', $user_id ) ) );
	}
}
